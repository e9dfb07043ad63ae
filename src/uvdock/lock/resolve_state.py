"""What `uvdock lock resolve` saves before it changes anything: the model, without the files.

Reading, writing and restoring the state is `uvdock.files.state_store`'s job (the file layer, beside
edit.py); this module only says what a saved state is and how `state.json` maps onto it.

The state lives in `<git dir>/uvdock/resolve-state/`: the working-tree bytes of the lock
(`worktree`), the content of every index stage (`stage<N>.blob`) and `state.json` with
modes, blob ids and stages. Files saved along with the lock (pyproject.toml, when
`lock resolve` merges it) get the same record in a sub-folder `also<N>/`, listed under
`also` in `state.json`. `state.json` is written last, so a directory without it is an
unfinished save from a run that stopped before changing anything. Blob contents are kept
as files because after `git add` the stage blobs are unreferenced and `git gc` may
eventually prune them; restore writes them back into the object store when missing.

Git itself is reached through a `GitIndex` the command passes in, so neither module starts
a process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

STATE_FILE = "state.json"
WORKTREE_FILE = "worktree"


class IndexEntry(NamedTuple):
    mode: str
    sha: str
    stage: int


class GitIndex(Protocol):
    """The index and object store of one repository, as a save and a restore need them."""

    @property
    def worktree(self) -> Path: ...
    @property
    def git_dir(self) -> Path: ...
    def stage_entries(self, path: str) -> list[IndexEntry]: ...
    def blob_bytes(self, sha: str) -> bytes: ...
    def unmerged_listing(self, path: str) -> str:
        """`git ls-files -u -- path` exactly as git prints it."""
        ...

    def has_object(self, sha: str) -> bool: ...
    def store_blob(self, file: Path) -> None: ...
    def set_entries(self, path: str, entries: Sequence[IndexEntry]) -> None:
        """Replace every index entry of `path` (all stages) with `entries`, exactly."""
        ...


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
    # Where the relock runs (mode, engine, container, run_id), so `--abort` after a hard
    # kill can stop the container or the processes the killed run started.
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
