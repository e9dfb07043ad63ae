"""`uvdock lock diff --format markdown BASE HEAD` in a real git repository; --format elsewhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git
from lock.test_lock_markdown import GOLDEN, modified_lock
from samples import gfm


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
    assert json.loads(result.out) == {
        "command": "lock diff",
        "ok": True,
        "exit_code": 0,
        "dry_run": False,
        "lock": "uv.lock",
        "added": [],
        "removed": [],
        "changed": [],
    }


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


@pytest.mark.engine
def test_add_and_remove_print_the_markdown_table(
    engine_image: str, uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = uv_project(("alpha",))
    engine: list[str | Path] = ["--repo", repo, "--engine", "podman", "--image", engine_image]
    assert run_cli(*engine, "lock").code == 0
    added = run_cli(*engine, "add", "gamma", "--format", "markdown")
    assert added.code == 0, added.err
    assert "**uv.lock changes**: 0 changed, 1 added, 0 removed" in added.out
    rows = gfm.table_rows(added.out)
    assert rows[1][:3] == ["`gamma`", "added", "-"]
    removed = run_cli(*engine, "remove", "gamma", "--format", "markdown")
    assert removed.code == 0, removed.err
    assert gfm.table_rows(removed.out)[1][:2] == ["`gamma`", "removed"]
    # `> changes.md` captures the table and nothing else: progress and the commit hint go
    # to stderr when stdout carries the document.
    for result in (added, removed):
        body = [line for line in result.out.splitlines() if line.strip()]
        assert body[0].startswith("**uv.lock changes**")
        assert all(line.startswith("|") for line in body[1:]), result.out
        assert "uv.lock" in result.err
