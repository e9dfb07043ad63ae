"""state_store: save a conflicted file's bytes and index stages, put them back exactly."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from conftest import commit_all, git

from uvdock.commands.lock.resolve import RepoIndex
from uvdock.files import state_store


def conflicted(make_repo: Callable[..., Path], *, delete_theirs: bool = False) -> Path:
    repo = make_repo({"uv.lock": "version = 1\na\nb\n", "other.txt": "x\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    if delete_theirs:
        git(repo, "rm", "-q", "uv.lock")
    else:
        (repo / "uv.lock").write_text("version = 1\nfeature\nb\n")
    commit_all(repo, "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "uv.lock").write_text("version = 1\nmain\nb\n")
    commit_all(repo, "main")
    git(repo, "merge", "feature", check=False)
    assert git(repo, "ls-files", "-u", "uv.lock")
    return repo


def state_of(repo: Path) -> tuple[bytes | None, str, str, int | None]:
    lock = repo / "uv.lock"
    return (
        lock.read_bytes() if lock.exists() else None,
        git(repo, "ls-files", "-s", "uv.lock"),
        git(repo, "status", "--porcelain"),
        lock.stat().st_mode & 0o7777 if lock.exists() else None,
    )


def test_save_then_restore_is_exact(make_repo: Callable[..., Path]) -> None:
    repo = conflicted(make_repo)
    (repo / "uv.lock").chmod(0o600)
    before = state_of(repo)
    state = state_store.save(RepoIndex(repo), "uv.lock", ref="main", operation="merge")
    assert [e.stage for e in state.entries] == [1, 2, 3]
    assert state.unmerged_listing == git(repo, "ls-files", "-u", "--", "uv.lock")
    assert state.operation == "merge" and state.ref == "main"
    # What a relock does: new content, staged at stage 0.
    (repo / "uv.lock").write_bytes(b"version = 1\nrelocked\n")
    git(repo, "add", "uv.lock")
    assert state_of(repo) != before
    state_store.restore(RepoIndex(repo), state_store.load(repo / ".git") or state)
    assert state_of(repo) == before
    state_store.discard(repo / ".git")
    assert state_store.load(repo / ".git") is None


def test_restore_rewrites_pruned_blobs(make_repo: Callable[..., Path]) -> None:
    # Stages whose blobs no commit holds (as after a dropped stash or rewritten history).
    repo = make_repo({"other.txt": "x\n"})
    blobs = {}
    for stage in (1, 2, 3):
        (repo / "uv.lock").write_text(f"version = 1\nstage {stage} only\n")
        blobs[stage] = git(repo, "hash-object", "-w", "uv.lock").strip()
    lines = "".join(f"100644 {sha} {stage}\tuv.lock\n" for stage, sha in blobs.items())
    subprocess.run(
        ["git", "-C", str(repo), "update-index", "--index-info"], input=lines, text=True, check=True
    )
    before = state_of(repo)
    assert before[1].count("\n") == 3
    state = state_store.save(RepoIndex(repo), "uv.lock", ref="main", operation=None)
    (repo / "uv.lock").write_bytes(b"version = 1\nrelocked\n")
    git(repo, "add", "uv.lock")
    for sha in blobs.values():  # what `git gc --prune=now` does to unreferenced blobs
        (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
        assert subprocess.run(["git", "-C", str(repo), "cat-file", "-e", sha]).returncode != 0
    state_store.restore(RepoIndex(repo), state)
    assert state_of(repo) == before
    for stage, sha in blobs.items():
        assert git(repo, "cat-file", "blob", sha) == f"version = 1\nstage {stage} only\n"


def test_modify_delete_conflict_without_worktree_file(make_repo: Callable[..., Path]) -> None:
    repo = conflicted(make_repo, delete_theirs=True)
    (repo / "uv.lock").unlink()  # the user's side may be the deletion
    before = state_of(repo)
    state = state_store.save(RepoIndex(repo), "uv.lock", ref="main", operation="merge")
    assert not state.worktree_present
    (repo / "uv.lock").write_text("version = 1\nrelocked\n")
    git(repo, "add", "uv.lock")
    state_store.restore(RepoIndex(repo), state)
    assert state_of(repo) == before


def test_unfinished_save_counts_as_none(make_repo: Callable[..., Path]) -> None:
    repo = conflicted(make_repo)
    partial = state_store.state_dir(repo / ".git").with_name("resolve-state.partial")
    partial.mkdir(parents=True)
    (partial / "worktree").write_bytes(b"x")
    assert state_store.load(repo / ".git") is None
    state = state_store.save(RepoIndex(repo), "uv.lock", ref="main", operation=None)
    assert not partial.exists() and state.folder == state_store.state_dir(repo / ".git")


def test_files_saved_along_are_restored_exactly(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"uv.lock": "version = 1\na\n", "pyproject.toml": "[project]\nx = 1\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "uv.lock").write_text("version = 1\nfeature\n")
    (repo / "pyproject.toml").write_text("[project]\nx = 2\n")
    commit_all(repo, "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "uv.lock").write_text("version = 1\nmain\n")
    (repo / "pyproject.toml").write_text("[project]\nx = 3\n")
    commit_all(repo, "main")
    git(repo, "merge", "feature", check=False)
    before = (
        state_of(repo),
        (repo / "pyproject.toml").read_bytes(),
        git(repo, "ls-files", "-s", "pyproject.toml"),
    )
    assert before[2].count("\n") == 3
    state = state_store.save(
        RepoIndex(repo), "uv.lock", ref="main", operation="merge", also=("pyproject.toml",)
    )
    assert [s.path for s in state.also] == ["pyproject.toml"]
    (repo / "pyproject.toml").write_text("[project]\nx = 4\n")
    (repo / "uv.lock").write_text("version = 1\nrelocked\n")
    git(repo, "add", "uv.lock", "pyproject.toml")
    loaded = state_store.load(repo / ".git")
    assert loaded is not None and loaded.also[0].entries == state.also[0].entries
    state_store.restore(RepoIndex(repo), loaded)
    after = (
        state_of(repo),
        (repo / "pyproject.toml").read_bytes(),
        git(repo, "ls-files", "-s", "pyproject.toml"),
    )
    assert after == before
