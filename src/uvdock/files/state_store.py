"""What `uvdock lock resolve` saves before it changes anything, and how it is put back.

`<git dir>/uvdock/resolve-state/` holds the lock's working-tree bytes, every index stage's
content (after `git add` git may prune those blobs), `also<N>/` for files saved along with
it, and `state.json`, written last; the folder is moved into place in one rename.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from uvdock.errors import EnvironmentUnusable
from uvdock.files import textlines
from uvdock.files.edit import atomic_write_bytes
from uvdock.run import git, signals

STATE_FILE = "state.json"


class Repo(Protocol):  # the work tree and its git dir, as `lock resolve` names them
    @property
    def worktree(self) -> Path: ...
    @property
    def git_dir(self) -> Path: ...


@dataclass(frozen=True)
class SavedState:
    path: str  # from the work tree's root, e.g. "uv.lock"
    worktree_present: bool
    worktree_mode: int
    entries: tuple[git.IndexEntry, ...]
    unmerged_listing: str  # `git ls-files -u -- path` at save time
    ref: str
    operation: str | None
    created: float
    folder: Path
    also: tuple[SavedState, ...] = ()  # other files saved and restored with this one
    # What the relock started (mode, engine, container, run_id, a local process group), so
    # `--abort` after a hard kill can stop it before restoring.
    started: tuple[tuple[str, str], ...] = ()


def state_dir(git_dir: Path) -> Path:
    return git_dir / "uvdock" / "resolve-state"


def load(git_dir: Path) -> SavedState | None:
    """The saved state, or None when there is none (an unfinished save counts as none)."""
    folder = state_dir(git_dir)
    try:
        data = json.loads(textlines.read_text(folder / STATE_FILE, newlines=True))
        return _from_data(data, folder)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError, KeyError, TypeError, AttributeError) as exc:
        # A damaged state must not leave `lock resolve` and `--abort` stuck or crashing.
        raise EnvironmentUnusable(
            f"{folder / STATE_FILE}: the saved state of `lock resolve` is unreadable ({exc})",
            hint=f"put uv.lock back by hand if needed, then remove {folder}",
        ) from None


def _from_data(data: dict[str, Any], folder: Path) -> SavedState:
    path = str(data["path"])
    return SavedState(
        path=path,
        worktree_present=bool(data["worktree_present"]),
        worktree_mode=int(data["worktree_mode"]),
        entries=tuple(
            git.IndexEntry(str(e["mode"]), str(e["sha"]), int(e["stage"]), path)
            for e in data["entries"]
        ),
        unmerged_listing=str(data["unmerged_listing"]),
        ref=str(data["ref"]),
        operation=data.get("operation"),
        created=float(data["created"]),
        folder=folder,
        also=tuple(
            _from_data({**data, **extra, "also": []}, folder / str(extra["dir"]))
            for extra in data.get("also", [])
        ),
        started=tuple(sorted((str(k), str(v)) for k, v in (data.get("started") or {}).items())),
    )


def save(
    repo: Repo,
    path: str,
    *,
    ref: str,
    operation: str | None,
    also: tuple[str, ...] = (),
    started: Mapping[str, str] | None = None,
) -> SavedState:
    """Record the lock's (and `also`'s) working-tree bytes and every index entry of them."""
    folder = state_dir(repo.git_dir)
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(folder.with_name(folder.name + ".discarded"), ignore_errors=True)
    data = _record(repo.worktree, path, staging)
    data["also"] = [
        {**_record(repo.worktree, other, staging / f"also{n}"), "dir": f"also{n}"}
        for n, other in enumerate(also)
    ]
    data.update(ref=ref, operation=operation, created=time.time(), pid=os.getpid())
    data["started"] = dict(started or {})
    atomic_write_bytes(staging / STATE_FILE, json.dumps(data, indent=1).encode())
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(staging, folder)
    state = load(repo.git_dir)
    assert state is not None  # just written
    return state


def _record(worktree: Path, path: str, folder: Path) -> dict[str, Any]:
    """One file's part of `state.json`, its bytes and index stages' blobs copied to `folder`."""
    folder.mkdir(parents=True)
    target = worktree / path
    present = target.is_file()
    if present:
        shutil.copyfile(target, folder / "worktree")
    entries = git.index_entries(worktree, path)
    for entry in entries:
        blob = git.blob_bytes(worktree, entry.sha, what=f"{path} (index stage {entry.stage})")
        (folder / f"stage{entry.stage}.blob").write_bytes(blob)
    return {
        "path": path,
        "worktree_present": present,
        "worktree_mode": target.stat().st_mode & 0o7777 if present else 0o644,
        "entries": [{"mode": e.mode, "sha": e.sha, "stage": e.stage} for e in entries],
        "unmerged_listing": "".join(
            f"{e.mode} {e.sha} {e.stage}\t{path}\n" for e in entries if e.stage
        ),
    }


def restore(repo: Repo, state: SavedState) -> None:
    """Put the lock's (and the files saved with it) bytes and index entries back exactly."""
    with signals.held():
        for saved in (*state.also, state):
            for entry in saved.entries:
                if not git.object_exists(repo.worktree, entry.sha):
                    git.hash_object_file(repo.worktree, saved.folder / f"stage{entry.stage}.blob")
            target = repo.worktree / saved.path
            if saved.worktree_present:
                data = (saved.folder / "worktree").read_bytes()
                atomic_write_bytes(target, data, mode=saved.worktree_mode)
            else:
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
            git.set_index_entries(repo.worktree, saved.path, list(saved.entries))


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
