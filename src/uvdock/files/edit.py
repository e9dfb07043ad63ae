"""Edits as plans: the old and new text of each file, a unified diff, and an atomic apply.

Text is kept exactly (CRLF, a missing final newline). Several files are applied all or
nothing: each new text goes to a temporary file beside its target, then all are moved into
place; on any failure or Ctrl-C the originals are put back from the bytes kept in memory.
Every write keeps inside the repository (`confined`), follows a symlinked file to its target
(the link stays a link), keeps mode, owner and group, and turns an OS error into exit 3.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.files import textlines
from uvdock.run import signals

NO_NEWLINE = "\\ No newline at end of file\n"

# The folders writes must stay inside while a command holds the repository lock; empty
# outside a command (library use and unit tests write where they are told).
_roots: list[Path] = []


@contextlib.contextmanager
def confined(*roots: Path) -> Iterator[None]:
    """Refuse (exit 2) any write whose real path is outside every one of `roots`."""
    saved = list(_roots)
    _roots[:] = [Path(os.path.realpath(r)) for r in roots]
    try:
        yield
    finally:
        _roots[:] = saved


def inside(path: Path, root: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


def read_text(path: Path) -> str:
    try:
        return textlines.read_text(path)
    except UnicodeDecodeError as exc:
        raise InputRefused(
            f"{path}: not UTF-8 text (byte {exc.start}); nothing was changed"
        ) from None
    except OSError as exc:
        raise os_error(exc, path, "cannot read") from None


def os_error(exc: OSError, path: Path, doing: str) -> EnvironmentUnusable:
    """An OS failure worded for the user: the path and the system's own cause (exit 3)."""
    cause = exc.strerror or str(exc) or exc.__class__.__name__
    return EnvironmentUnusable(f"{path}: {doing}: {cause}; nothing was changed")


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

    def diff(self) -> str:
        """A unified diff `git apply` takes: CRs kept, a missing final newline marked."""
        old, new = ([line.text for line in textlines.split_lines(t)] for t in (self.old, self.new))
        lines = difflib.unified_diff(old, new, f"a/{self.name}", f"b/{self.name}")
        return "".join(line if line.endswith("\n") else line + "\n" + NO_NEWLINE for line in lines)


def plan_diff(edits: Iterable[FileEdit]) -> str:
    return "".join(e.diff() for e in edits if e.changed)


def target_of(path: Path) -> Path:
    """The file a write to `path` must replace: a symlink's target, so the link stays."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    if _roots and not any(inside(target, root) for root in _roots):
        raise InputRefused(
            f"{path}: resolves to {os.path.realpath(path)}, outside the repository; "
            "nothing was changed"
        )
    return target


# `.NAME.PID.XXXXXXXX.uvdock`: the pid says whose temporary file it is (see remove_leftovers).
_TEMP = re.compile(r"\..+\.(\d+)\.[a-z0-9_]{8}\.uvdock")
_swept: set[str] = set()  # folders this process already cleaned


def remove_leftovers(folder: Path) -> None:
    """Remove the temporary files that killed uvdock runs left in `folder`: uvdock's name
    pattern, and a pid that no longer runs. Once per folder and process, and only while a
    command holds the repository lock (`confined`): then no other uvdock writes here."""
    if not _roots or str(folder) in _swept:
        return
    _swept.add(str(folder))
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            match = _TEMP.fullmatch(name)
            try:  # our own pid too: never our own temporary files
                if match:
                    os.kill(int(match[1]), 0)
            except ProcessLookupError:
                with contextlib.suppress(OSError):
                    os.unlink(folder / name)
            except (PermissionError, OverflowError):  # another user's, or no pid at all
                pass


def _write_temp(path: Path, data: bytes, mode: int | None = None) -> Path:
    """A synced temporary file beside `path` (already a target) holding `data`; the caller
    has removed what a killed run left in that folder (once per folder, not per file)."""
    try:
        old = path.stat() if path.exists() else None
        fd, tmp = tempfile.mkstemp(".uvdock", f".{path.name}.{os.getpid()}.", path.parent)
    except OSError as exc:
        raise os_error(exc, path, "cannot write") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        # Under sudo or as root, the new file would otherwise belong to root.
        if old is not None and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
            with contextlib.suppress(PermissionError):  # not ours to give away: keep ours
                os.chown(tmp, old.st_uid, old.st_gid)
        if mode is None and old is not None:
            mode = old.st_mode & 0o7777
        elif mode is None:  # mkstemp creates 0600; a new file gets what open() would give it
            os.umask(umask := os.umask(0))
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)  # after chown, which clears set-id bits
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise os_error(exc, path, "cannot write") from None
        raise
    return Path(tmp)


def _replace(tmp: Path, path: Path) -> None:
    try:
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise os_error(exc, path, "cannot replace") from None


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with exactly `data` in one step, keeping its mode unless `mode` is given."""
    target = target_of(path)
    remove_leftovers(target.parent)
    _replace(_write_temp(target, data, mode), target)


def atomic_write(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def ensure_private_folder(folder: Path) -> None:
    """The user's uvdock config dir (trust records): outside the repository by design."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)


def ensure_folder(folder: Path) -> None:
    target_of(folder).mkdir(parents=True, exist_ok=True)


def apply(edits: Sequence[FileEdit]) -> list[FileEdit]:
    """Write every changed file, or none. Returns the edits that were written."""
    changed = [e for e in edits if e.changed]
    targets = [target_of(e.path) for e in changed]  # every refusal before any write
    # A killed run's temporary files: beside every file named, and beside what links point to.
    for folder in {e.path.parent for e in edits} | {t.parent for t in targets}:
        remove_leftovers(folder)
    temps: list[tuple[FileEdit, Path, Path]] = []
    try:
        for edit, target in zip(changed, targets, strict=True):
            temps.append((edit, target, _write_temp(target, edit.new.encode("utf-8"))))
        done: list[tuple[FileEdit, Path]] = []
        with signals.held():
            try:
                for edit, target, tmp in temps:
                    _replace(tmp, target)
                    done.append((edit, target))
            except BaseException:
                for edit, target in reversed(done):
                    atomic_write(target, edit.old)
                raise
        temps = []
        return changed
    finally:
        for _, _, tmp in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()
