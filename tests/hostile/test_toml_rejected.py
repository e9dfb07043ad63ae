"""Issue 29, item 7: TOML that Python's parser rejects for any reason is broken TOML.

An integer of 5000 digits is not a TOML integer (TOML's are 64-bit; uv refuses the file), and
tomllib raises ValueError for it, not TOMLDecodeError. Where a broken pyproject.toml is
ignored it is ignored; where it is needed it is refused with one line; the merge driver stops
git's clean merge with "git's merge is clean but is not valid TOML".
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, diverged, git

HUGE = "9" * 5000
MENTIONS_UVDOCK = f'[project]\nname = "demo"\nversion = "0.1.0"\n# uvdock\n[tool.x]\nn = {HUGE}\n'


@pytest.mark.parametrize(
    "words",
    [("image", "check"), ("trust", "--show"), ("recipe", "show"), ("lts", "show")],
    ids=" ".join,
)
def test_a_huge_integer_in_pyproject_is_broken_toml_not_a_crash(
    words: tuple[str, ...], megatron_repo: Path, run_cli: RunCli
) -> None:
    (megatron_repo / "pyproject.toml").write_text(MENTIONS_UVDOCK)
    result = run_cli("--repo", megatron_repo, *words)
    assert result.code != 4, result.err
    assert "internal error" not in result.err


def test_a_huge_integer_is_refused_where_the_pyproject_is_needed(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    (megatron_repo / "pyproject.toml").write_text(MENTIONS_UVDOCK)
    result = run_cli("--repo", megatron_repo, "--dry-run", "sync", "--engine", "local")
    assert result.code == 2, result.out + result.err
    assert "pyproject.toml is not valid TOML" in result.err.splitlines()[0]


def test_a_huge_integer_in_uvdock_toml_is_refused_naming_it(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    (megatron_repo / "uvdock.toml").write_text(f"lock-timeout = {HUGE}\n")
    result = run_cli("--repo", megatron_repo, "image", "check")
    assert result.code == 2, result.err
    assert result.err.startswith("error: uvdock.toml: not valid TOML")


BASE = '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = [\n    "delta",\n]\n'
OURS = BASE.replace('    "delta",\n', '    "delta",\n    "alpha",\n')
THEIRS = BASE.replace('version = "0.1.0"\n', f'version = "0.1.0"\n\n[tool.x]\nn = {HUGE}\n')


def test_the_merge_driver_stops_a_clean_merge_with_a_huge_integer(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = diverged(make_repo, BASE, OURS, THEIRS)
    head = git(repo, "rev-parse", "HEAD")
    assert run_cli("--repo", repo, "merge-driver", "install", "--pyproject").code == 0
    merged = subprocess.run(
        ["git", "-C", str(repo), "merge", "--no-edit", "theirs"], capture_output=True, text=True
    )
    assert merged.returncode != 0
    assert "Traceback" not in merged.stderr and "internal error" not in merged.stderr
    assert "git's merge is clean but is not valid TOML" in merged.stdout + merged.stderr
    assert git(repo, "rev-parse", "HEAD") == head  # no merge commit with a broken file


def test_the_merge_driver_says_so_for_the_files_git_hands_it(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files = []
    for name, text in (("base", BASE), ("ours", OURS), ("theirs", THEIRS)):
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    result = run_cli("merge-driver", "pyproject", *files)
    assert result.code == 1, result.err
    assert "git's merge is clean but is not valid TOML" in result.err
    assert "internal error" not in result.err
