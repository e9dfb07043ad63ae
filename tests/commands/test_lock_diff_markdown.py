"""`uvdock lock diff --format markdown BASE HEAD` in a real git repository; --format elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git
from lock.test_lock_markdown import GOLDEN, modified_lock


def test_markdown_between_two_revisions(megatron_repo: Path, run_cli: RunCli) -> None:
    git(megatron_repo, "branch", "base")
    lock = megatron_repo / "uv.lock"
    lock.write_text(modified_lock(lock.read_text()))
    commit_all(megatron_repo, "bump")
    result = run_cli(
        "--repo", megatron_repo, "lock", "diff", "--format", "markdown", "base", "HEAD"
    )
    assert result.code == 0, result.err
    assert result.out == GOLDEN.replace("**uv.lock**", "**base -> HEAD**", 1)


def test_json_wins_over_format(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli(
        "--repo", megatron_repo, "--json", "lock", "diff", "--format", "markdown", "HEAD", "HEAD"
    )
    assert result.code == 0, result.err
    assert json.loads(result.out) == {"added": [], "removed": [], "changed": []}


def test_text_stays_the_default(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "lock", "diff", "HEAD", "HEAD")
    assert result.out.startswith("HEAD -> HEAD: 0 added, 0 removed, 0 changed")


@pytest.mark.parametrize("words", [["add"], ["remove"], ["lock"], ["lock", "resolve"]])
def test_lock_changing_commands_offer_markdown(words: list[str], run_cli: RunCli) -> None:
    result = run_cli(*words, "--help")
    assert result.code == 0
    assert "--format {text,markdown}" in result.out


def test_an_unknown_format_is_refused(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "lock", "diff", "--format", "html", "HEAD")
    assert result.code == 2
    assert "html" in result.err
