"""`uvdock lock resolve` relocks on the lock of the ref being merged in, not on origin/main.

Real git (a feature branch merging a local `main` ahead of `origin/main`; a fork merging
`upstream/main`), real uv from a local wheel folder holding idna 3.6 and 3.20: the merged
side locked idna at 3.6, origin/main has no idna at all, so relocking on origin/main's lock
would pick 3.20.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git, init_repo
from samples.lock_conflicts import make_conflict, pyproject, uv_lock
from samples.wheels import make_wheel

from uvdock.lock import lockfile

LOCAL = ("--engine", "local")


def _versions(repo: Path, name: str) -> list[str]:
    entries = lockfile.read_packages((repo / "uv.lock").read_bytes()).get(name, frozenset())
    return sorted(version for version, _source in entries)


def _commit_locked(repo: Path, text: str, message: str, *, first: str | None = None) -> None:
    """Lock `first` (a narrower pin) before `text`: uv then keeps the version it chose."""
    for step in (first, text):
        if step is None:
            continue
        (repo / "pyproject.toml").write_text(step)
        locked = uv_lock(repo)
        assert locked.returncode == 0, locked.stderr
    commit_all(repo, message)


def _project(root: Path, wheelhouse: Path) -> Path:
    repo = init_repo(root / "repo")
    shutil.copytree(wheelhouse, repo / "wheels")
    make_wheel(repo / "wheels", "idna", "3.6")
    make_wheel(repo / "wheels", "idna", "3.20")
    _commit_locked(repo, pyproject(), "initial")
    return repo


def _bare(repo: Path, path: Path, remote: str) -> None:
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(path)], check=True)
    git(repo, "remote", "add", remote, str(path))
    git(repo, "fetch", "-q", remote)


def _feature_and_idna_on(repo: Path, branch: str) -> None:
    """A feature branch adds beta; `branch` adds idna, locked at 3.6 while 3.20 exists."""
    git(repo, "checkout", "-q", "-b", "feature")
    _commit_locked(repo, pyproject(group_deps=("beta",)), "feature: add beta")
    git(repo, "checkout", "-q", branch)
    _commit_locked(
        repo,
        pyproject(main_deps=("idna",)),
        "add idna",
        first=pyproject(main_deps=("idna<3.7",)),
    )
    assert _versions(repo, "idna") == ["3.6"]


def _assert_kept_merged_side(repo: Path) -> None:
    assert _versions(repo, "idna") == ["3.6"]  # origin/main's lock would have given 3.20
    assert _versions(repo, "beta") == ["2.0.0"]
    assert git(repo, "ls-files", "-u") == ""
    git(repo, "commit", "-q", "--no-edit")
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("configured", [False, True])
def test_feature_merging_local_main_ahead_of_origin_main(
    configured: bool,
    wheelhouse: Path,
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if configured:
        monkeypatch.setenv("UVDOCK_BASE_REF", "origin/main")
    repo = _project(tmp_path, wheelhouse)
    _bare(repo, tmp_path / "origin.git", "origin")  # origin/main: the initial commit
    _feature_and_idna_on(repo, "main")  # local main is one commit ahead, not pushed
    git(repo, "checkout", "-q", "feature")
    git(repo, "merge", "--no-edit", "main", check=False)
    assert git(repo, "ls-files", "-u", "uv.lock")
    result = run_cli("--repo", repo, *LOCAL, "lock", "resolve")
    assert result.code == 0, result.err
    said = result.out + result.err
    # A base-ref set aside is said only when the user set one.
    set_aside = "the configured base-ref origin/main is another commit"
    assert (set_aside in said) is configured
    assert "relocking on main (MERGE_HEAD, " in said
    assert "next: git commit" in said
    _assert_kept_merged_side(repo)


def test_fork_merging_upstream_main(wheelhouse: Path, tmp_path: Path, run_cli: RunCli) -> None:
    upstream_work = _project(tmp_path / "up", wheelhouse)
    _feature_and_idna_on(upstream_work, "main")  # upstream's main locks idna 3.6
    git(upstream_work, "branch", "-q", "-D", "feature")
    upstream = tmp_path / "upstream.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream_work), str(upstream)], check=True)
    # The fork: cloned before upstream added idna; origin = the fork, upstream = upstream.
    fork = tmp_path / "fork"
    subprocess.run(["git", "clone", "-q", str(upstream), str(fork)], check=True)
    git(fork, "reset", "-q", "--hard", "HEAD~1")
    fork_bare = tmp_path / "fork.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(fork), str(fork_bare)], check=True)
    git(fork, "remote", "rename", "origin", "upstream")
    git(fork, "remote", "add", "origin", str(fork_bare))
    git(fork, "fetch", "-q", "--all")
    git(fork, "checkout", "-q", "-b", "feature")
    _commit_locked(fork, pyproject(group_deps=("beta",)), "feature: add beta")
    git(fork, "merge", "--no-edit", "upstream/main", check=False)
    assert git(fork, "ls-files", "-u", "uv.lock")
    result = run_cli("--repo", fork, *LOCAL, "--json", "lock", "resolve")
    assert result.code == 0, result.err
    assert "base-ref" not in result.err  # nothing configured, nothing set aside
    payload = json.loads(result.out)
    assert payload["ref"] == "upstream/main" and payload["ref_source"] == "MERGE_HEAD"
    assert payload["commit"] == git(fork, "rev-parse", "upstream/main").strip()
    assert [a["name"] for a in payload["diff"]["added"]] == ["alpha", "beta"]  # beta needs alpha
    assert payload["diff"]["changed"] == []
    _assert_kept_merged_side(fork)


@pytest.mark.parametrize(
    ("operation", "source", "next_step"),
    [
        ("rebase", "rebase-merge/onto", "git rebase --continue"),
        ("cherry-pick", "HEAD", "git cherry-pick --continue"),
        ("am", "HEAD", "git am --continue"),
    ],
)
def test_each_operation_builds_on_its_own_commit(
    operation: str, source: str, next_step: str, wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    # origin/main exists and is behind main: only the operation's own commit is right.
    conflict = make_conflict(tmp_path, wheelhouse, operation, with_origin=True)
    repo = conflict.repo
    main = git(repo, "rev-parse", "main").strip()
    result = run_cli("--repo", repo, *LOCAL, "--json", "lock", "resolve", "--no-fetch")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert (payload["ref"], payload["ref_source"], payload["commit"]) == ("main", source, main)
    assert payload["operation"] == operation and payload["next_step"] == next_step
    # The step named works.
    git(repo, "-c", "core.editor=true", *next_step.split()[1:])
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "show", "HEAD:uv.lock") == (repo / "uv.lock").read_text()


def test_onto_still_overrides(wheelhouse: Path, tmp_path: Path, run_cli: RunCli) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    repo = conflict.repo
    git(repo, "tag", "initial", "main~1")
    result = run_cli(
        "--repo", repo, *LOCAL, "--json", "lock", "resolve", "--no-fetch", "--onto", "initial"
    )
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert (payload["ref"], payload["ref_source"]) == ("initial", "--onto")


def test_without_an_operation_the_base_ref_is_used_and_said(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    repo = conflict.repo
    git(repo, "add", "uv.lock")  # markers staged, then the merge committed as is
    git(repo, "commit", "-q", "--no-edit")
    assert lockfile.has_conflict_markers(conflict.lock.read_bytes())
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    result = run_cli("--repo", repo, *LOCAL, "lock", "resolve", "--no-fetch")
    assert result.code == 0, result.err
    said = result.out + result.err
    assert "relocking on origin/main (no merge, rebase" in said
    assert "base-ref = origin/main, the default" in said


def test_revert_stopped_on_uv_lock(wheelhouse: Path, tmp_path: Path, run_cli: RunCli) -> None:
    # Revert an old commit (beta in the feature group) under a newer one (idna 3.6 while
    # 3.20 exists): uv.lock conflicts; the relock builds on HEAD and keeps idna at 3.6.
    repo = _project(tmp_path, wheelhouse)
    _bare(repo, tmp_path / "origin.git", "origin")  # origin/main: the initial commit
    _commit_locked(repo, pyproject(group_deps=("beta",)), "add beta")
    _commit_locked(
        repo,
        pyproject(main_deps=("idna",), group_deps=("beta",)),
        "add idna",
        first=pyproject(main_deps=("idna<3.7",), group_deps=("beta",)),
    )
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "revert", "--no-edit", "HEAD~1", check=False)
    assert git(repo, "ls-files", "-u", "uv.lock"), "the revert did not stop on uv.lock"
    result = run_cli("--repo", repo, *LOCAL, "--json", "lock", "resolve", "--no-fetch")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert (payload["operation"], payload["ref_source"]) == ("revert", "HEAD")
    assert (payload["commit"], payload["next_step"]) == (head, "git revert --continue")
    assert _versions(repo, "idna") == ["3.6"] and _versions(repo, "beta") == []
    git(repo, "-c", "core.editor=true", "revert", "--continue")
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "show", "HEAD:uv.lock") == (repo / "uv.lock").read_text()


def test_a_cherry_pick_says_the_lock_is_the_one_applied_onto(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    # HEAD's lock holds the versions of the branch the change lands on, nothing "merged in".
    conflict = make_conflict(tmp_path, wheelhouse, "cherry-pick")
    result = run_cli("--repo", conflict.repo, *LOCAL, "lock", "resolve", "--no-fetch")
    assert result.code == 0, result.err
    said = result.out + result.err
    assert "the commit this cherry-pick applies onto: its uv.lock holds the versions" in said
    assert "already on the branch the change lands on" in said
    assert "being merged in" not in said


def test_a_squash_merge_builds_on_the_squashed_branch(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    # `git merge --squash` records no MERGE_HEAD; SQUASH_MSG names the commits it squashed.
    repo = _project(tmp_path, wheelhouse)
    _bare(repo, tmp_path / "origin.git", "origin")  # origin/main: the initial commit
    _feature_and_idna_on(repo, "main")
    git(repo, "checkout", "-q", "feature")
    git(repo, "merge", "--squash", "main", check=False)
    assert git(repo, "ls-files", "-u", "uv.lock")
    result = run_cli("--repo", repo, *LOCAL, "--json", "lock", "resolve", "--no-fetch")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert (payload["ref"], payload["ref_source"]) == ("main", "SQUASH_MSG")
    assert payload["commit"] == git(repo, "rev-parse", "main").strip()
    assert (payload["operation"], payload["next_step"]) == ("merge", "git commit")
    _assert_kept_merged_side(repo)
