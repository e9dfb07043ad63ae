"""Edits as plans: the old and new text of each file, a unified diff, and an atomic apply.

Text is read and written with `newline=""`, so CRLF, a missing final newline and every
untouched byte survive. Several files are applied all or nothing: each new text is first
written to a temporary file beside its target, then all are moved into place; on any
failure or Ctrl-C the originals are put back from the bytes kept in memory.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from uvdock import signals, textlines


def read_text(path: Path) -> str:
    try:
        return textlines.read_text(path)
    except UnicodeDecodeError as exc:
        from uvdock.errors import InputRefused

        raise InputRefused(
            f"{path}: not UTF-8 text (byte {exc.start}); nothing was changed"
        ) from None


class FileEdit(NamedTuple):
    path: Path
    old: str
    new: str
    display: str = ""  # the path as the user should see it, e.g. relative to the repo

    @property
    def changed(self) -> bool:
        return self.old != self.new

    @property
    def name(self) -> str:
        return self.display or str(self.path)

    def diff(self, context: int = 3) -> str:
        return "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                fromfile=f"a/{self.name}",
                tofile=f"b/{self.name}",
                n=context,
            )
        ).replace("\r", "")  # keep the terminal readable; the file keeps its CRLF


def plan_diff(edits: Iterable[FileEdit]) -> str:
    diffs = (e.diff() for e in edits if e.changed)
    return "".join(d if d.endswith("\n") else d + "\n" for d in diffs)


def _new_file_mode() -> int:
    # mkstemp creates 0600; a new file should get what open() would give it.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _write_temp(path: Path, data: bytes, mode: int | None = None) -> Path:
    """A synced temporary file beside `path` holding `data`, with `path`'s mode (or `mode`)."""
    if mode is None:
        mode = path.stat().st_mode & 0o7777 if path.exists() else _new_file_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".uvdock", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(tmp)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with exactly `data` in one step, keeping its mode unless `mode` is given."""
    os.replace(_write_temp(path, data, mode), path)


def atomic_write(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def apply(edits: Sequence[FileEdit]) -> list[FileEdit]:
    """Write every changed file, or none. Returns the edits that were written."""
    changed = [e for e in edits if e.changed]
    temps: list[tuple[FileEdit, Path]] = []
    try:
        for edit in changed:
            temps.append((edit, _write_temp(edit.path, edit.new.encode("utf-8"))))
        done: list[FileEdit] = []
        with signals.held():
            try:
                for edit, tmp in temps:
                    os.replace(tmp, edit.path)
                    done.append(edit)
            except BaseException:
                for edit in reversed(done):
                    atomic_write(edit.path, edit.old)
                raise
        temps = []
        return changed
    finally:
        for _, tmp in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()
