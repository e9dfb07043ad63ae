"""`merge-driver install --pyproject`: real git merges and rebases merge pyproject.toml."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git
from samples.lock_conflicts import uv_lock
from samples.pyproject_conflicts import BASE, add_to, edit, make_pyproject_conflict

from uvdock.lock import lockfile


def diverged(make_repo: Callable[..., Path], main: str, feature: str) -> Path:
    repo = make_repo({"pyproject.toml": BASE, "README": "x\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "pyproject.toml").write_text(feature)
    commit_all(repo, "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "pyproject.toml").write_text(main)
    commit_all(repo, "main")
    return repo


def install(run_cli: RunCli, repo: Path) -> None:
    result = run_cli("--repo", repo, "merge-driver", "install", "--pyproject")
    assert result.code == 0, result.err


@pytest.mark.parametrize("operation", ["merge", "rebase"])
def test_both_additions_merge_without_stopping(
    operation: str, make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    main = add_to(BASE, "dependencies", "alpha")
    repo = diverged(make_repo, main, add_to(BASE, "dependencies", "beta"))
    install(run_cli, repo)
    attributes = (repo / ".git" / "info" / "attributes").read_text().splitlines()
    assert "pyproject.toml merge=uvdock-pyproject" in attributes
    git(repo, "checkout", "-q", "feature")
    if operation == "merge":
        git(repo, "merge", "--no-edit", "main")
    else:
        git(repo, "rebase", "main")
    text = (repo / "pyproject.toml").read_text()
    # In a merge ours is the feature (beta first); in a rebase ours is main (alpha first).
    first, second = ("beta", "alpha") if operation == "merge" else ("alpha", "beta")
    assert text == main.replace('    "alpha",\n', f'    "{first}",\n    "{second}",\n')
    assert git(repo, "status", "--porcelain") == ""


def test_real_conflict_falls_back_to_conflict_markers(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = diverged(
        make_repo,
        edit(BASE, 'version = "0.1.0"', 'version = "0.2.0"'),
        edit(BASE, 'version = "0.1.0"', 'version = "0.3.0"'),
    )
    install(run_cli, repo)
    git(repo, "checkout", "-q", "feature")
    stopped = git(repo, "merge", "--no-edit", "main", check=False)
    del stopped
    text = (repo / "pyproject.toml").read_text()
    # The markers name the branches, as git's own do (git passes no labels before 2.44).
    assert '<<<<<<< feature\nversion = "0.3.0"\n=======\nversion = "0.2.0"\n>>>>>>> main\n' in text
    stages = [line.split()[2] for line in git(repo, "ls-files", "-u").splitlines()]
    assert stages == ["1", "2", "3"]


def test_with_the_lock_driver_lock_resolve_finishes(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        "merge",
        main=add_to(BASE, "extra", "alpha"),
        feature=add_to(BASE, "extra", "beta"),
    )
    repo = conflict.repo
    git(repo, "merge", "--abort")
    install(run_cli, repo)
    git(repo, "merge", "--no-edit", "main", check=False)
    assert git(repo, "ls-files", "-u", "pyproject.toml") == ""  # the driver merged it
    assert git(repo, "ls-files", "-u", "uv.lock")  # the lock waits for `lock resolve`
    assert not lockfile.has_conflict_markers(conflict.lock.read_bytes())
    result = run_cli("--repo", repo, "--engine", "local", "lock", "resolve", "--onto", "main")
    assert result.code == 0, result.err
    assert git(repo, "ls-files", "-u") == ""
    assert uv_lock(repo, "--check").returncode == 0
    assert {"alpha", "beta"} <= lockfile.read_packages(conflict.lock.read_bytes()).keys()


def test_install_pyproject_is_idempotent_and_dry_run_changes_nothing(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({"pyproject.toml": BASE})
    config_before = (repo / ".git" / "config").read_bytes()
    dry = run_cli("--repo", repo, "--dry-run", "merge-driver", "install", "--pyproject")
    assert dry.code == 0
    assert "+pyproject.toml merge=uvdock-pyproject" in dry.out
    assert (repo / ".git" / "config").read_bytes() == config_before
    install(run_cli, repo)
    again = run_cli("--repo", repo, "--json", "merge-driver", "install", "--pyproject")
    payload = json.loads(again.out)
    assert payload["changed"] is False
    assert payload["config"]["merge.uvdock-pyproject.driver"].endswith("%O %A %B %P")


def test_driver_names_each_decision_and_dry_run_writes_nothing(
    tmp_path: Path, run_cli: RunCli
) -> None:
    base = BASE
    ours = add_to(BASE, "dependencies", "alpha")
    theirs = edit(BASE, '    "gamma<2",  # gamma 2 breaks the demo\n', "")
    files = []
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    dry = run_cli("--dry-run", "merge-driver", "pyproject", *files)
    assert dry.code == 0, dry.err
    assert files[1].read_text() == ours  # --dry-run: OURS untouched
    assert "--- a/pyproject.toml (ours)" in dry.out and '-    "gamma<2"' in dry.out
    assert "--- a/pyproject.toml (theirs)" in dry.out and '+    "alpha",' in dry.out
    assert "theirs removed gamma<2 from project.dependencies" in dry.out
    as_json = run_cli("--json", "merge-driver", "pyproject", *files)
    report = json.loads(as_json.out)["pyproject"]
    assert report["via"] == "git-hunks"  # adjacent lines: git alone would conflict
    assert report["decisions"] == [
        "theirs removed gamma<2 from project.dependencies",
        "ours added alpha to project.dependencies",
    ]
    assert files[1].read_text() == ours.replace('    "gamma<2",  # gamma 2 breaks the demo\n', "")


def test_in_a_rebase_the_driver_says_which_side_is_yours(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    # In a rebase "theirs" is the user's own commit: "theirs removed alpha" alone reads
    # as if someone else removed it.
    with_alpha = add_to(BASE, "dependencies", "alpha")
    repo = make_repo({"pyproject.toml": with_alpha, "README": "x\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "pyproject.toml").write_text(BASE)  # the user's commit removes alpha
    commit_all(repo, "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "pyproject.toml").write_text(add_to(with_alpha, "dependencies", "beta"))
    commit_all(repo, "main")
    install(run_cli, repo)
    git(repo, "checkout", "-q", "feature")
    done = subprocess.run(
        ["git", "-C", str(repo), "rebase", "main"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "theirs removed alpha" in said
    assert "theirs = your commit being replayed" in said


def test_in_a_rebase_the_markers_name_the_onto_branch_and_the_commit(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = diverged(
        make_repo,
        edit(BASE, 'version = "0.1.0"', 'version = "0.2.0"'),
        edit(BASE, 'version = "0.1.0"', 'version = "0.3.0"'),
    )
    install(run_cli, repo)
    git(repo, "checkout", "-q", "feature")
    commit = git(repo, "rev-parse", "--short=12", "feature").strip()
    git(repo, "rebase", "main", check=False)
    text = (repo / "pyproject.toml").read_text()
    assert '<<<<<<< main\nversion = "0.2.0"\n=======\n' in text
    assert f">>>>>>> your commit {commit} (feature)\n" in text


def test_each_side_s_changes_are_counted_as_its_own(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    main = add_to(BASE, "dependencies", "alpha")
    repo = diverged(make_repo, main, add_to(BASE, "dependencies", "beta"))
    install(run_cli, repo)
    git(repo, "checkout", "-q", "feature")
    done = subprocess.run(
        ["git", "-C", str(repo), "merge", "--no-edit", "main"],
        capture_output=True,
        text=True,
        check=False,
    )
    said = done.stdout + done.stderr
    assert "merged pyproject.toml (1 change from feature, 1 from main)" in said, said
