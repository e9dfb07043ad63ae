"""A pyproject.toml that starts with a UTF-8 byte order mark (some Windows editors write
one) is read by uv; the merge reads it too and keeps the mark, instead of calling the
file "not valid TOML" and falling back to git's conflict markers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import RunCli, diverged, git

from uvdock.merge.pyproject import merge_pyproject

BOM = "\ufeff"
BASE = '[project]\nname = "demo"\n\n[tool.uv]\nno-build-isolation-package = [\n    "a",\n]\n'
OURS = BASE.replace('    "a",\n', '    "a",\n    "ours-pkg",\n')
THEIRS = BASE.replace('    "a",\n', '    "a",\n    "theirs-pkg",\n')


def test_the_library_merges_and_keeps_the_mark() -> None:
    result = merge_pyproject(BOM + BASE, BOM + OURS, BOM + THEIRS)
    assert result.text is not None and result.text.startswith(BOM)
    assert result.text.count(BOM) == 1
    assert '"ours-pkg"' in result.text and '"theirs-pkg"' in result.text


def test_the_side_that_added_the_mark_decides() -> None:
    result = merge_pyproject(BASE, OURS, BOM + THEIRS)
    assert result.text is not None and result.text.startswith(BOM)
    result = merge_pyproject(BOM + BASE, BOM + OURS, THEIRS)
    assert result.text is not None and not result.text.startswith(BOM)


def test_a_real_git_merge_with_the_driver(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = diverged(make_repo, BOM + BASE, BOM + OURS, BOM + THEIRS)
    assert run_cli("--repo", repo, "merge-driver", "install", "--pyproject").code == 0
    git(repo, "merge", "--no-edit", "theirs")  # plain git: a conflict (both sides added)
    merged = (repo / "pyproject.toml").read_bytes()
    assert merged.startswith(b"\xef\xbb\xbf") and b"<<<<<<<" not in merged
    assert b'"ours-pkg"' in merged and b'"theirs-pkg"' in merged
