"""`lock resolve` keeps what only the branch changed in uv.lock, or says it could not.

The branch pins gamma back with `uv lock --upgrade-package gamma==1.0.0` (never written
in pyproject.toml) and adds beta; main adds a dependency; a real `git merge` (or rebase)
stops on uv.lock; real uv relocks from the local wheel folder (--engine local).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git, init_repo
from samples.lock_conflicts import lock_once, pyproject, uv_lock

from uvdock.lock import lockfile

RESOLVE = ("--engine", "local", "lock", "resolve", "--onto", "main", "--no-fetch")


def gamma(repo: Path) -> frozenset[lockfile.Entry]:
    return lockfile.read_packages((repo / "uv.lock").read_bytes())["gamma"]


def branch_pinned_gamma(
    tmp_path: Path, wheels: Path, operation: str, main_adds: tuple[str, ...]
) -> Path:
    repo = init_repo(tmp_path / "repo")
    shutil.copytree(wheels, repo / "wheels")
    (repo / "pyproject.toml").write_text(pyproject(main_deps=("gamma",)))
    lock_once(repo)
    commit_all(repo, "initial")
    assert {v for v, _ in gamma(repo)} == {"2.0.0"}
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "pyproject.toml").write_text(pyproject(main_deps=("gamma",), group_deps=("beta",)))
    lock_once(repo)
    pinned = uv_lock(repo, "--upgrade-package", "gamma==1.0.0")
    assert pinned.returncode == 0, pinned.stderr
    commit_all(repo, "feature: add beta, hold gamma at 1.0.0")
    git(repo, "checkout", "-q", "main")
    (repo / "pyproject.toml").write_text(pyproject(main_deps=("gamma", *main_adds)))
    lock_once(repo)
    commit_all(repo, f"main: add {', '.join(main_adds)}")
    git(repo, "checkout", "-q", "feature")
    git(repo, operation, *(["--no-edit"] if operation == "merge" else []), "main", check=False)
    assert git(repo, "ls-files", "-u", "uv.lock"), f"{operation} did not stop on uv.lock"
    return repo


@pytest.mark.parametrize("operation", ["merge", "rebase"])
def test_a_version_only_the_branch_pinned_is_kept(
    operation: str, wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    repo = branch_pinned_gamma(tmp_path, wheelhouse, operation, main_adds=("alpha",))
    result = run_cli("--repo", repo, *RESOLVE)
    assert result.code == 0, result.err
    assert {v for v, _ in gamma(repo)} == {"1.0.0"}
    assert "kept: gamma 1.0.0, which only this branch pinned (the base has 2.0.0)" in result.out
    packages = lockfile.read_packages((repo / "uv.lock").read_bytes())
    assert "alpha" in packages and "beta" in packages
    assert uv_lock(repo, "--check").returncode == 0
    assert git(repo, "diff", "--name-only", "--", "uv.lock") == ""  # staged as written


def test_a_pin_that_no_longer_resolves_is_named_with_its_reason(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    # main adds highpin, which needs gamma>=2: the branch's gamma 1.0.0 cannot stay.
    repo = branch_pinned_gamma(tmp_path, wheelhouse, "merge", main_adds=("alpha", "highpin"))
    result = run_cli("--repo", repo, *RESOLVE)
    assert result.code == 0, result.err
    assert {v for v, _ in gamma(repo)} == {"2.0.0"}
    assert "could not keep: gamma 1.0.0, which only this branch pinned" in result.err
    assert "because `uv lock --upgrade-package gamma==1.0.0` does not resolve" in result.err
    assert uv_lock(repo, "--check").returncode == 0


def test_json_lists_what_was_kept(wheelhouse: Path, tmp_path: Path, run_cli: RunCli) -> None:
    repo = branch_pinned_gamma(tmp_path, wheelhouse, "merge", main_adds=("alpha",))
    result = run_cli("--repo", repo, "--json", *RESOLVE)
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["branch_only"] == {
        "kept": [{"name": "gamma", "version": "1.0.0"}],
        "not_kept": [],
    }


def test_a_change_the_branch_requirements_explain_is_left_to_the_relock(
    wheelhouse: Path, tmp_path: Path
) -> None:
    from uvdock.lock import branch_pins

    repo = init_repo(tmp_path / "repo")
    shutil.copytree(wheelhouse, repo / "wheels")
    (repo / "pyproject.toml").write_text(pyproject(main_deps=("gamma",)))
    lock_once(repo)
    base = (repo / "uv.lock").read_bytes()
    (repo / "pyproject.toml").write_text(pyproject(main_deps=("gamma<2",)))
    lock_once(repo)
    branch = (repo / "uv.lock").read_bytes()
    assert branch_pins.branch_only(base, branch, base) == []
    pinned = uv_lock(repo, "--upgrade-package", "gamma==0.3.0")
    assert pinned.returncode == 0, pinned.stderr
    # Requirements as the base had them, the version moved by hand: the branch's alone.
    (repo / "pyproject.toml").write_text(pyproject(main_deps=("gamma",)))
    assert uv_lock(repo, "--upgrade-package", "gamma==0.3.0").returncode == 0
    only = branch_pins.branch_only(base, (repo / "uv.lock").read_bytes(), base)
    assert [(p.name, p.version, p.before) for p in only] == [("gamma", "0.3.0", "2.0.0")]


def test_dry_run_names_what_it_would_keep(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    repo = branch_pinned_gamma(tmp_path, wheelhouse, "merge", main_adds=("alpha",))
    before = (repo / "uv.lock").read_bytes()
    result = run_cli("--repo", repo, "--dry-run", *RESOLVE)
    assert result.code == 0, result.err
    assert "then keep what only this branch changed, if the relock moves it: gamma==1.0.0" in (
        result.out
    )
    assert (repo / "uv.lock").read_bytes() == before
