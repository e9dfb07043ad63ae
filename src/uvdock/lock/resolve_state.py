"""What `uvdock lock resolve` decides and saves, without the files or git.

The saved state (`files/state_store.py` keeps it in `<git dir>/uvdock/resolve-state/`): the
lock's working-tree bytes, every index stage's content (after `git add` git may prune those
blobs) and `state.json`, written last; files saved along with the lock in `also<N>/`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

STATE_FILE = "state.json"
WORKTREE_FILE = "worktree"

# Per operation git stopped in: the command that finishes it, and the commit `lock resolve`
# takes the lock of (the side being merged in; cherry-pick, revert and am land on HEAD).
NEXT_STEP = {
    "rebase": "git rebase --continue",
    "merge": "git commit",
    "am": "git am --continue",
    "cherry-pick": "git cherry-pick --continue",
    "revert": "git revert --continue",
}
BUILDS_ON = {
    "merge": "the commit this merge brings in",
    "rebase": "the commit this rebase replays onto",
    "am": "the commit `git am` applies onto",
    "cherry-pick": "the commit this cherry-pick applies onto",
    "revert": "the commit this revert applies onto",
}


def branch_stage(operation: str | None) -> int:
    """The index stage of the branch's own lock: ours in a merge, theirs when a rebase,
    cherry-pick, revert or am replays the branch's commit."""
    return 2 if operation in ("merge", None) else 3


class IndexEntry(NamedTuple):
    mode: str
    sha: str
    stage: int


class GitIndex(Protocol):  # one repository's index and objects, as the command reaches them
    @property
    def worktree(self) -> Path: ...
    @property
    def git_dir(self) -> Path: ...
    def stage_entries(self, path: str) -> list[IndexEntry]: ...
    def blob_bytes(self, sha: str) -> bytes: ...
    def unmerged_listing(self, path: str) -> str: ...  # `git ls-files -u -- path` as printed
    def has_object(self, sha: str) -> bool: ...
    def store_blob(self, file: Path) -> None: ...
    def set_entries(self, path: str, entries: Sequence[IndexEntry]) -> None: ...  # all stages


@dataclass(frozen=True)
class SavedState:
    path: str  # repo-relative path of the lock, e.g. "uv.lock"
    worktree_present: bool
    worktree_mode: int
    entries: tuple[IndexEntry, ...]
    unmerged_listing: str  # `git ls-files -u -- path` at save time
    ref: str
    operation: str | None
    created: float
    folder: Path
    also: tuple[SavedState, ...] = ()  # other files saved and restored with this one
    # What the relock started (mode, engine, container, run_id, a local process group), so
    # `--abort` after a hard kill can stop it before restoring.
    started: tuple[tuple[str, str], ...] = ()

    def blob_file(self, stage: int) -> Path:
        return self.folder / f"stage{stage}.blob"


def state_dir(git_dir: Path) -> Path:
    return git_dir / "uvdock" / "resolve-state"


def from_data(data: dict[str, Any], folder: Path) -> SavedState:
    """The state `state.json`'s content describes, its files being in `folder`."""
    entries = tuple(
        IndexEntry(str(e["mode"]), str(e["sha"]), int(e["stage"])) for e in data["entries"]
    )
    also = tuple(
        from_data({**data, **extra, "also": []}, folder / str(extra["dir"]))
        for extra in data.get("also", [])
    )
    return SavedState(
        path=str(data["path"]),
        worktree_present=bool(data["worktree_present"]),
        worktree_mode=int(data["worktree_mode"]),
        entries=entries,
        unmerged_listing=str(data["unmerged_listing"]),
        ref=str(data["ref"]),
        operation=data.get("operation"),
        created=float(data["created"]),
        folder=folder,
        also=also,
        started=tuple(sorted((str(k), str(v)) for k, v in (data.get("started") or {}).items())),
    )


def file_record(
    path: str, *, present: bool, mode: int, entries: Sequence[IndexEntry], unmerged_listing: str
) -> dict[str, Any]:
    """One saved file's part of `state.json`."""
    return {
        "path": path,
        "worktree_present": present,
        "worktree_mode": mode,
        "entries": [{"mode": e.mode, "sha": e.sha, "stage": e.stage} for e in entries],
        "unmerged_listing": unmerged_listing,
    }
