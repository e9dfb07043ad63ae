"""Where `uvdock lock resolve` keeps its saved state: reading, writing, restoring, discarding.

The file layer beside edit.py: the model (what a saved state is, how `state.json` maps onto
it) is `uvdock.lock.resolve_state`; this module owns the folder `<git dir>/uvdock/resolve-state/`.
`state.json` is written last and fsynced, and the folder is moved into place in one rename, so
a directory without it is an unfinished save from a run that stopped before changing anything.
Git is reached through the `GitIndex` the command passes in: this module starts no process.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from uvdock.files import textlines
from uvdock.files.edit import atomic_write_bytes
from uvdock.lock.resolve_state import (
    STATE_FILE,
    WORKTREE_FILE,
    GitIndex,
    SavedState,
    file_record,
    from_data,
    state_dir,
)
from uvdock.run import signals


def load(git_dir: Path) -> SavedState | None:
    """The saved state, or None when there is none (an unfinished save counts as none)."""
    folder = state_dir(git_dir)
    try:
        data = json.loads(textlines.read_text(folder / STATE_FILE, newlines=True))
        return from_data(data, folder)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError, KeyError, TypeError, AttributeError) as exc:
        # A damaged state must not leave `lock resolve` and `--abort` stuck or crashing.
        from uvdock.errors import EnvironmentUnusable

        raise EnvironmentUnusable(
            f"{folder / STATE_FILE}: the saved state of `lock resolve` is unreadable ({exc})",
            hint=f"put uv.lock back by hand if needed, then remove {folder}",
        ) from None


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
    return file_record(
        path,
        present=present,
        mode=mode,
        entries=entries,
        unmerged_listing=index.unmerged_listing(path),
    )


def _write_synced(path: Path, data: bytes) -> None:
    with path.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


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
        saved = (state.folder / WORKTREE_FILE).read_bytes()
        atomic_write_bytes(target, saved, mode=state.worktree_mode)
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
    data = json.loads(textlines.read_text(path, newlines=True))
    data["started"] = {**(data.get("started") or {}), **started}
    atomic_write_bytes(path, json.dumps(data, indent=1).encode())
