"""`uvdock lock resolve` on real git conflicts, relocking with the host's uv (--engine local)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RunCli, git
from samples.lock_conflicts import (
    Conflict,
    make_conflict,
    snapshot,
    status_without_lock,
    uv_lock,
)

from uvdock.commands.lock.resolve import RepoIndex
from uvdock.files import state_store
from uvdock.lock import lockfile

LOCAL = ("--engine", "local")
ONTO_MAIN = (*LOCAL, "lock", "resolve", "--onto", "main", "--no-fetch")


def assert_resolved(conflict: Conflict) -> None:
    repo = conflict.repo
    data = conflict.lock.read_bytes()
    assert not lockfile.has_conflict_markers(data)
    assert git(repo, "ls-files", "-u", "uv.lock") == ""
    packages = lockfile.read_packages(data)
    assert conflict.main_pkg in packages and conflict.feature_pkg in packages
    check = uv_lock(repo, "--check")
    assert check.returncode == 0, check.stderr
    assert git(repo, "diff", "--name-only", "--", "uv.lock") == ""  # what is staged is the file
    assert not state_store.state_dir(repo / ".git").exists()


@pytest.mark.parametrize(
    ("operation", "next_step"),
    [
        ("merge", "git commit"),
        ("rebase", "git rebase --continue"),
        ("cherry-pick", "git cherry-pick --continue"),
    ],
)
def test_resolves_and_stages(
    operation: str, next_step: str, wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, operation)
    before = snapshot(conflict.repo)
    others_before = status_without_lock(conflict.repo)
    result = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert result.code == 0, result.err
    assert_resolved(conflict)
    assert status_without_lock(conflict.repo) == others_before
    assert (conflict.repo / "pyproject.toml").read_bytes() == before.pyproject
    out = result.out
    assert f"next: {next_step}" in out
    # The diff against main names what this branch adds on top of it.
    assert "1 added, 0 removed, 0 changed" in out and conflict.feature_pkg in out
    # The step the user is told to take works.
    if operation != "merge":
        git(conflict.repo, "-c", "core.editor=true", operation, "--continue")
    else:
        git(conflict.repo, "commit", "-q", "--no-edit")
    assert git(conflict.repo, "status", "--porcelain") == ""


def test_onto_a_remote_ref_is_fetched_first(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    # The local origin/main is one commit behind: only the fetch brings main's lock.
    conflict = make_conflict(tmp_path, wheelhouse, "merge", with_origin=True)
    result = run_cli(
        "--repo", conflict.repo, *LOCAL, "--json", "lock", "resolve", "--onto", "origin/main"
    )
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["ref"] == "origin/main" and payload["operation"] == "merge"
    assert payload["next_step"] == "git commit"
    diff = payload["diff"]
    assert [(a["name"], a["versions"]) for a in diff["added"]] == [("beta", ["2.0.0"])]
    assert diff["removed"] == diff["changed"] == []
    assert git(conflict.repo, "rev-parse", "origin/main") == git(conflict.repo, "rev-parse", "main")
    assert_resolved(conflict)


def test_failed_fetch_warns_and_uses_local_ref(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    git(conflict.repo, "remote", "add", "origin", str(tmp_path / "missing.git"))
    git(conflict.repo, "update-ref", "refs/remotes/origin/main", "main")
    result = run_cli("--repo", conflict.repo, *LOCAL, "lock", "resolve", "--onto", "origin/main")
    assert result.code == 0, result.err
    assert "could not fetch origin main" in result.err
    assert_resolved(conflict)


def test_markers_without_unmerged_entries(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    git(conflict.repo, "add", "uv.lock")  # staged with the markers in it
    assert lockfile.has_conflict_markers(conflict.lock.read_bytes())
    result = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert result.code == 0, result.err
    assert_resolved(conflict)


def test_pyproject_with_staged_conflict_markers_is_refused(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    # An unmerged pyproject.toml is merged (test_lock_resolve_pyproject.py); one staged
    # with its markers still in it is refused.
    conflict = make_conflict(tmp_path, wheelhouse, "merge", feature_in_dependencies=True)
    assert git(conflict.repo, "ls-files", "-u", "pyproject.toml")
    git(conflict.repo, "add", "pyproject.toml")
    before = snapshot(conflict.repo)
    again = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert again.code == 2 and "pyproject.toml holds conflict markers" in again.err
    assert snapshot(conflict.repo) == before


def test_unsatisfiable_merge_restores_exact_prior_state(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(
        tmp_path, wheelhouse, "merge", main_pkg="lowpin", feature_pkg="highpin"
    )
    before = snapshot(conflict.repo)
    assert before.unmerged.count("\n") == 3
    result = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert result.code == 1
    assert "back as they were" in result.err
    assert "usually in pyproject.toml" in result.err and "network" not in result.err
    assert snapshot(conflict.repo) == before
    assert not state_store.state_dir(conflict.repo / ".git").exists()


def test_a_relock_failing_on_the_network_says_network(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")  # the same DNS error, without uv's 3 retries
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    repo = conflict.repo
    # The merged project now asks an index whose host never resolves (RFC 6761 .invalid):
    # the real uv fails with a DNS error, as in a container without network.
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            "no-index = true", 'index-url = "https://pypi.invalid/simple"'
        )
    )
    git(repo, "add", "pyproject.toml")
    before = snapshot(repo)
    result = run_cli("--repo", repo, *ONTO_MAIN)
    assert result.code == 3, result.err
    assert "could not reach the package index" in result.err
    assert "fix the network" in result.err and "usually in pyproject.toml" not in result.err
    assert snapshot(repo) == before


def test_no_conflict_changes_nothing(wheelhouse: Path, tmp_path: Path, run_cli: RunCli) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    git(conflict.repo, "merge", "--abort")
    before = snapshot(conflict.repo)
    result = run_cli("--repo", conflict.repo, *LOCAL, "lock", "resolve", "--onto", "nonexistent")
    assert result.code == 0
    assert "no conflict" in result.out
    assert snapshot(conflict.repo) == before


def test_dry_run_shows_plan_and_changes_nothing(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "rebase")
    before = snapshot(conflict.repo)
    result = run_cli("--repo", conflict.repo, "--dry-run", *ONTO_MAIN)
    assert result.code == 0, result.err
    out = result.out
    assert "uv lock" in out and "git add -- uv.lock" in out and "main:uv.lock" in out
    assert snapshot(conflict.repo) == before
    assert not state_store.state_dir(conflict.repo / ".git").exists()


def test_missing_ref_or_ref_without_lock_is_refused(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    before = snapshot(conflict.repo)
    resolve = (*LOCAL, "lock", "resolve", "--no-fetch", "--onto")
    missing = run_cli("--repo", conflict.repo, *resolve, "nope")
    assert missing.code == 2 and "nope does not exist" in missing.err
    empty_tree = git(conflict.repo, "hash-object", "-t", "tree", "/dev/null").strip()
    commit = git(conflict.repo, "commit-tree", empty_tree, "-m", "x").strip()
    git(conflict.repo, "tag", "bare", commit)
    no_lock = run_cli("--repo", conflict.repo, *resolve, "bare")
    assert no_lock.code == 2 and "bare has no uv.lock" in no_lock.err
    assert snapshot(conflict.repo) == before


def test_abort_restores_after_a_crash_and_blocks_a_new_run(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "rebase")
    before = snapshot(conflict.repo)
    # What a run killed after its save and mid-relock leaves behind.
    state_store.save(RepoIndex(conflict.repo), "uv.lock", ref="main", operation="rebase")
    conflict.lock.write_bytes(b"half written\n")
    git(conflict.repo, "add", "uv.lock")
    blocked = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert blocked.code == 2 and "--abort" in blocked.err
    aborted = run_cli("--repo", conflict.repo, "lock", "resolve", "--abort")
    assert aborted.code == 0, aborted.err
    assert snapshot(conflict.repo) == before
    assert not state_store.state_dir(conflict.repo / ".git").exists()
    nothing = run_cli("--repo", conflict.repo, "lock", "resolve", "--abort")
    assert nothing.code == 2 and "nothing to abort" in nothing.err


def test_after_merge_driver_the_unmerged_clean_lock_is_resolved(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    git(conflict.repo, "merge", "--abort")
    assert run_cli("--repo", conflict.repo, "merge-driver", "install").code == 0
    git(conflict.repo, "merge", "--no-edit", "main", check=False)
    assert git(conflict.repo, "ls-files", "-u", "uv.lock")
    assert not lockfile.has_conflict_markers(conflict.lock.read_bytes())
    result = run_cli("--repo", conflict.repo, *ONTO_MAIN)
    assert result.code == 0, result.err
    assert_resolved(conflict)
