"""`uvdock lock resolve` when pyproject.toml is unmerged too: merge it, relock, stage.

Real git conflicts, real uv (--engine local) against offline wheels.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import RunCli, git
from samples.lock_conflicts import Conflict, uv_lock
from samples.pyproject_conflicts import BASE, add_to, edit, full_snapshot, make_pyproject_conflict

from uvdock.files import state_store
from uvdock.lock import lockfile

LOCAL = ("--engine", "local")
ONTO_MAIN = (*LOCAL, "lock", "resolve", "--onto", "main", "--no-fetch")
NEXT = {
    "merge": "git commit",
    "rebase": "git rebase --continue",
    "cherry-pick": "git cherry-pick --continue",
}


def assert_clean_resolution(conflict: Conflict) -> dict[str, object]:
    repo = conflict.repo
    assert git(repo, "ls-files", "-u") == ""
    assert git(repo, "diff", "--name-only") == ""  # what is staged is what is on disk
    data = conflict.lock.read_bytes()
    assert not lockfile.has_conflict_markers(data)
    packages = lockfile.read_packages(data)
    assert conflict.main_pkg in packages and conflict.feature_pkg in packages
    check = uv_lock(repo, "--check")
    assert check.returncode == 0, check.stderr
    assert not state_store.state_dir(repo).exists()
    return tomllib.loads((repo / "pyproject.toml").read_text())


def lists(doc: dict[str, Any]) -> dict[str, list[str]]:
    return {
        "dependencies": doc["project"]["dependencies"],
        "extra": doc["project"]["optional-dependencies"]["extra"],
        "group": doc["dependency-groups"]["feature"],
    }


@pytest.mark.parametrize("where", ["dependencies", "extra", "group"])
@pytest.mark.parametrize("operation", ["merge", "rebase", "cherry-pick"])
def test_both_sides_add_to_the_same_list(
    operation: str, where: str, wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        operation,
        main=add_to(BASE, where, "alpha"),
        feature=add_to(BASE, where, "beta"),
    )
    result = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert result.code == 0, result.err
    doc = assert_clean_resolution(conflict)
    assert sorted(lists(doc)[where]) == sorted(
        [*lists(tomllib.loads(BASE))[where], "alpha", "beta"]
    )
    out = result.out
    assert "merged pyproject.toml" in out and f"next: {NEXT[operation]}" in out
    # Untouched lines (the comments, the other lists) are still there byte for byte.
    text = (conflict.repo / "pyproject.toml").read_text()
    for line in BASE.splitlines(keepends=True):
        assert line in text
    if operation == "merge":
        git(conflict.repo, "commit", "-q", "--no-edit")
    else:
        git(conflict.repo, "-c", "core.editor=true", operation, "--continue")
    assert git(conflict.repo, "status", "--porcelain") == ""


def test_removal_next_to_an_addition(wheelhouse: Path, tmp_path: Path, run_cli: RunCli) -> None:
    gamma = '    "gamma<2",  # gamma 2 breaks the demo\n'
    conflict = make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        "merge",
        main=edit(add_to(BASE, "group", "alpha"), gamma, ""),
        feature=add_to(BASE, "dependencies", "beta"),
    )
    result = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert result.code == 0, result.err
    doc = assert_clean_resolution(conflict)
    assert lists(doc)["dependencies"] == ["delta", "beta"]


def test_same_bump_on_both_sides_merges(wheelhouse: Path, tmp_path: Path, run_cli: RunCli) -> None:
    bumped = edit(BASE, '"gamma<2",  # gamma 2 breaks the demo', '"gamma>=2",')
    conflict = make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        "rebase",
        main=add_to(bumped.replace('"gamma>=2",', '"gamma>=2",  # both bumped'), "extra", "alpha"),
        feature=add_to(bumped, "extra", "beta"),
    )
    result = run_cli("--repo", conflict.repo, "--json", *ONTO_MAIN)
    assert result.code == 0, result.err
    doc = assert_clean_resolution(conflict)
    assert lists(doc)["dependencies"] == ["delta", "gamma>=2"]
    payload = json.loads(result.out)
    report = payload["pyproject"]
    assert report["merged"] is True and report["conflicts"] == []
    assert {
        "path": "project.optional-dependencies.extra",
        "entry": "beta",
        "change": "added",
        "written": "beta",
    } in report["taken"]["theirs"]
    assert "theirs added beta to project.optional-dependencies.extra" in report["decisions"]
    assert payload["next_step"] == "git rebase --continue"


@pytest.mark.parametrize(
    ("main_edit", "feature_edit", "line"),
    [
        (
            ('"gamma<2",', '"gamma>=1,<2",'),
            ('"gamma<2",', '"gamma>=2",'),
            'project.dependencies[gamma]: ours "gamma>=2", theirs "gamma>=1,<2"',
        ),
        (
            ('version = "0.1.0"', 'version = "0.2.0"'),
            ('version = "0.1.0"', 'version = "0.1.1"'),
            'project.version: ours "0.1.1", theirs "0.2.0"',
        ),
    ],
)
def test_real_conflict_is_refused_and_nothing_changes(  # in a merge, ours is the feature
    main_edit: tuple[str, str],
    feature_edit: tuple[str, str],
    line: str,
    wheelhouse: Path,
    tmp_path: Path,
    run_cli: RunCli,
) -> None:
    conflict = make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        "merge",
        main=add_to(edit(BASE, *main_edit), "dependencies", "alpha"),
        feature=add_to(edit(BASE, *feature_edit), "dependencies", "beta"),
    )
    before = full_snapshot(conflict.repo)
    result = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert result.code == 2
    err = result.err
    assert f"  {line}\n" in err and "nothing was changed" in err
    assert full_snapshot(conflict.repo) == before
    assert not state_store.state_dir(conflict.repo).exists()
    as_json = run_cli("--repo", conflict.repo, "--json", *ONTO_MAIN)
    assert as_json.code == 2
    conflicts = json.loads(as_json.out)["pyproject"]["conflicts"]
    assert len(conflicts) == 1 and line.startswith(conflicts[0]["path"])
    assert full_snapshot(conflict.repo) == before


def test_dry_run_shows_the_merged_file_and_changes_nothing(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        "merge",
        main=add_to(BASE, "dependencies", "alpha"),
        feature=add_to(BASE, "dependencies", "beta"),
    )
    before = full_snapshot(conflict.repo)
    result = run_cli("--repo", conflict.repo, "--dry-run", *ONTO_MAIN)
    assert result.code == 0, result.err
    out = result.out
    # The merged file against each side: ours (the feature) gains main's alpha, theirs beta.
    ours_diff = out.split("--- a/pyproject.toml (ours)", 1)[1].split("merged pyproject.toml")[0]
    theirs_diff = out.split("--- a/pyproject.toml (theirs)", 1)[1]
    assert '+    "alpha",\n' in ours_diff and '+    "beta",\n' not in ours_diff
    assert '+    "beta",\n' in theirs_diff and '+    "alpha",\n' not in theirs_diff
    assert "ours added beta to project.dependencies" in out
    assert "theirs added alpha to project.dependencies" in out
    assert "git add -- pyproject.toml" in out and "uv lock" in out
    # The staging command is introduced as a command, like the relock's "then run:".
    assert "then run:\ngit add -- pyproject.toml\n" in out
    assert full_snapshot(conflict.repo) == before
    as_json = run_cli("--repo", conflict.repo, "--dry-run", "--json", *ONTO_MAIN)
    assert as_json.code == 0, as_json.err
    report = json.loads(as_json.out)["pyproject"]
    assert report["merged"] is True
    assert [t["entry"] for t in report["taken"]["theirs"]] == ["alpha"]  # main, merged in
    assert full_snapshot(conflict.repo) == before


def test_failed_relock_restores_both_files_and_stages(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        "merge",
        main=add_to(BASE, "group", "lowpin"),
        feature=add_to(edit(BASE, '"gamma<2",', '"gamma",'), "group", "highpin"),
        main_pkg="lowpin",
        feature_pkg="highpin",
    )
    before = full_snapshot(conflict.repo)
    result = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert result.code == 1
    assert "uv.lock, pyproject.toml and their index entries are back" in result.err
    assert full_snapshot(conflict.repo) == before
    assert not state_store.state_dir(conflict.repo).exists()
