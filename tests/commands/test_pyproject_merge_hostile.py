"""TOML that tomlkit rejects (a duplicate key) never crashes the pyproject.toml merge:
the driver falls back to git's conflict markers (exit 1), `lock resolve` refuses (exit 2)
with nothing changed, and a merged text tomllib would reject is never written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import tomlkit
from conftest import RunCli, diverged, git

from uvdock.merge.pyproject import MergeRefused, merge_pyproject

BASE = '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = [\n    "delta",\n]\n'
OURS = BASE.replace('    "delta",\n', '    "delta",\n    "alpha",\n')
# `version` twice: tomllib and uv reject it; tomlkit raises KeyAlreadyPresent (no ValueError).
THEIRS = BASE.replace('version = "0.1.0"\n', 'version = "0.1.0"\nversion = "0.2.0"\n').replace(
    '    "delta",\n', '    "delta",\n    "beta",\n'
)


def test_duplicate_key_side_is_refused_by_the_library() -> None:
    with pytest.raises(MergeRefused, match="theirs is not valid TOML"):
        merge_pyproject(BASE, OURS, THEIRS)


def test_driver_falls_back_to_conflict_markers(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = diverged(make_repo, BASE, OURS, THEIRS)
    assert run_cli("--repo", repo, "merge-driver", "install", "--pyproject").code == 0
    git(repo, "merge", "--no-edit", "theirs", check=False)
    text = (repo / "pyproject.toml").read_text()
    assert "<<<<<<< main\n" in text and ">>>>>>> theirs\n" in text  # the branches' names
    assert '    "beta",\n' in text  # theirs' change is in front of the user, not lost
    stages = [line.split()[2] for line in git(repo, "ls-files", "-u").splitlines()]
    assert stages == ["1", "2", "3"]


def test_driver_run_directly_exits_1_with_markers(tmp_path: Path, run_cli: RunCli) -> None:
    files = []
    for name, text in (("base", BASE), ("ours", OURS), ("theirs", THEIRS)):
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    result = run_cli("merge-driver", "pyproject", *files)
    assert result.code == 1, result.err
    assert "theirs is not valid TOML" in result.err
    text = files[1].read_text()
    assert "\n<<<<<<< " in text and "\n>>>>>>> " in text and '    "beta",\n' in text


def test_lock_resolve_refuses_with_exit_2_and_changes_nothing(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = diverged(make_repo, BASE, OURS, THEIRS)
    git(repo, "merge", "--no-edit", "theirs", check=False)
    before = (repo / "pyproject.toml").read_bytes(), git(repo, "ls-files", "-s")
    result = run_cli("--repo", repo, "--engine", "local", "lock", "resolve", "--no-fetch")
    assert result.code == 2, result.err
    assert "theirs is not valid TOML" in result.err
    assert "Traceback" not in result.err
    assert ((repo / "pyproject.toml").read_bytes(), git(repo, "ls-files", "-s")) == before


def test_a_merged_text_tomllib_rejects_is_never_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_dump(document: object) -> str:
        return '[project]\nname = "demo"\nname = "again"\n'

    monkeypatch.setattr(tomlkit, "dumps", broken_dump)
    good_theirs = BASE.replace('    "delta",\n', '    "delta",\n    "beta",\n')
    with pytest.raises(MergeRefused, match="would not be valid TOML"):
        merge_pyproject(BASE, OURS, good_theirs)


def test_nesting_too_deep_for_the_parser_falls_back(tmp_path: Path, run_cli: RunCli) -> None:
    deep = BASE + "x = " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(MergeRefused, match="too deeply"):
        merge_pyproject(BASE, OURS, deep)
    files = []
    for name, text in (("base", BASE), ("ours", OURS), ("theirs", deep)):
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    result = run_cli("merge-driver", "pyproject", *files)
    # git's own merge, exactly as without the driver: here clean (the lines are apart).
    assert result.code == 0, result.err
    assert "too deeply" in result.err
    merged = files[1].read_text()
    assert '    "alpha",\n' in merged and "x = [[[" in merged


# A duplicate key theirs adds away from ours' change: git's own merge is clean, yet the
# result is not TOML (uv refuses it). Without the driver git would commit it silently.
THEIRS_APART = BASE.replace('name = "demo"\n', 'name = "demo"\nname = "again"\n')


def test_clean_git_merge_that_is_not_toml_stops_the_merge(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = diverged(make_repo, BASE, OURS, THEIRS_APART)
    head = git(repo, "rev-parse", "HEAD")
    assert run_cli("--repo", repo, "merge-driver", "install", "--pyproject").code == 0
    git(repo, "merge", "--no-edit", "theirs", check=False)
    assert git(repo, "rev-parse", "HEAD") == head  # no merge commit with a broken file
    text = (repo / "pyproject.toml").read_text()
    assert "<<<<<<<" not in text  # git's clean text, left for the user to fix
    assert 'name = "again"\n' in text and '    "alpha",\n' in text
    stages = [line.split()[2] for line in git(repo, "ls-files", "-u").splitlines()]
    assert stages == ["1", "2", "3"]


def test_driver_says_git_merge_is_clean_but_not_toml(tmp_path: Path, run_cli: RunCli) -> None:
    files = []
    for name, text in (("base", BASE), ("ours", OURS), ("theirs", THEIRS_APART)):
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    result = run_cli("merge-driver", "pyproject", *files)
    assert result.code == 1, result.err
    assert "theirs is not valid TOML" in result.err
    assert "conflict markers" not in result.err  # there are none: say what happened
    assert "git's merge is clean but is not valid TOML" in result.err
