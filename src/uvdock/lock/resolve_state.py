"""What `uvdock lock resolve` saves before it changes anything, and how it puts it back.

The state lives in `<git dir>/uvdock/resolve-state/`: the working-tree bytes of the lock
(`worktree`), the content of every index stage (`stage<N>.blob`) and `state.json` with
modes, blob ids and stages. Files saved along with the lock (pyproject.toml, when
`lock resolve` merges it) get the same record in a sub-folder `also<N>/`, listed under
`also` in `state.json`. `state.json` is written last, so a directory without it is an
unfinished save from a run that stopped before changing anything. Blob contents are kept
as files because after `git add` the stage blobs are unreferenced and `git gc` may
eventually prune them; restore writes them back into the object store when missing.

Git itself is reached through a `GitIndex` the command passes in, so this module starts
no process.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from uvdock import signals
from uvdock.edit import atomic_write_bytes

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


def load(git_dir: Path) -> SavedState | None:
    """The saved state, or None when there is none (an unfinished save counts as none)."""
    folder = state_dir(git_dir)
    try:
        data = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise OSError(f"{folder / STATE_FILE} is unreadable: {exc}") from exc
    return _from_data(data, folder)


def _from_data(data: dict[str, Any], folder: Path) -> SavedState:
    entries = tuple(
        IndexEntry(str(e["mode"]), str(e["sha"]), int(e["stage"])) for e in data["entries"]
    )
    also = tuple(
        _from_data({**data, **extra, "also": []}, folder / str(extra["dir"]))
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


def save(
    index: GitIndex,
    path: str,
    *,
    ref: str,
    operation: str | None,
    also: tuple[str, ...] = (),
    started: Mapping[str, str] | None = None,
) -> SavedState:
    """Record the lock's (and `also`'s) working-tree bytes and every index entry of them."""
    folder = state_dir(index.git_dir)
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(folder.with_name(folder.name + ".discarded"), ignore_errors=True)
    staging.mkdir(parents=True)
    data = _record(index, path, staging)
    data["also"] = []
    for number, other in enumerate(also):
        sub = f"also{number}"
        (staging / sub).mkdir()
        data["also"].append({**_record(index, other, staging / sub), "dir": sub})
    data.update(ref=ref, operation=operation, created=time.time(), pid=os.getpid())
    data["started"] = dict(started or {})
    _write_synced(staging / STATE_FILE, json.dumps(data, indent=1).encode())
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(staging, folder)
    state = load(index.git_dir)
    assert state is not None  # just written
    return state


def _record(index: GitIndex, path: str, folder: Path) -> dict[str, Any]:
    target = index.worktree / path
    present = target.is_file()
    mode = 0o644
    if present:
        mode = target.stat().st_mode & 0o7777
        shutil.copyfile(target, folder / WORKTREE_FILE)
    entries = index.stage_entries(path)
    for entry in entries:
        (folder / f"stage{entry.stage}.blob").write_bytes(index.blob_bytes(entry.sha))
    return {
        "path": path,
        "worktree_present": present,
        "worktree_mode": mode,
        "entries": [{"mode": e.mode, "sha": e.sha, "stage": e.stage} for e in entries],
        "unmerged_listing": index.unmerged_listing(path),
    }


def _write_synced(path: Path, data: bytes) -> None:
    with path.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _replace_file(target: Path, source: Path, mode: int) -> None:
    atomic_write_bytes(target, source.read_bytes(), mode=mode)


def restore(index: GitIndex, state: SavedState) -> None:
    """Put the lock's (and the files saved with it) bytes and index entries back exactly."""
    with signals.held():
        for saved in (*state.also, state):
            _restore_one(index, saved)


def _restore_one(index: GitIndex, state: SavedState) -> None:
    for entry in state.entries:
        if not index.has_object(entry.sha):
            index.store_blob(state.blob_file(entry.stage))
    target = index.worktree / state.path
    if state.worktree_present:
        _replace_file(target, state.folder / WORKTREE_FILE, state.worktree_mode)
    else:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
    index.set_entries(state.path, state.entries)


def discard(git_dir: Path) -> None:
    """Remove the state whole: renamed away first (atomic), so a kill during the removal
    leaves no half-deleted state for `--abort` to restore from."""
    folder = state_dir(git_dir)
    gone = folder.with_name(folder.name + ".discarded")
    shutil.rmtree(gone, ignore_errors=True)  # a killed earlier discard's leftover
    with contextlib.suppress(FileNotFoundError):
        os.replace(folder, gone)
    shutil.rmtree(gone, ignore_errors=True)


def note_started(git_dir: Path, started: Mapping[str, str]) -> None:
    """Add to the saved state what the relock started once it is known (a local uv's
    process group: its pid exists only after the state was saved)."""
    path = state_dir(git_dir) / STATE_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    data["started"] = {**(data.get("started") or {}), **started}
    atomic_write_bytes(path, json.dumps(data, indent=1).encode())
