"""One writer at a time: an exclusive lock on the repository for every command that writes.

`fcntl.flock` on `<git dir>/uvdock/lock`: the kernel drops it however its holder exits, so a
run killed with SIGKILL leaves only its note (pid and command line), which the next run is
told of. A run that finds the lock held waits `lock-timeout`, then is refused (exit 2).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import EnvironmentUnusable, InputRefused

_held: set[str] = set()  # the lock paths this process holds


class Holder(NamedTuple):
    pid: int
    command: str


def lock_path(git_dir: Path) -> Path:
    return git_dir / "uvdock" / "lock"


def _read_holder(fd: int) -> Holder | None:
    text = os.pread(fd, 4096, 0).decode("utf-8", errors="replace")
    pid, _, command = text.strip().partition(" ")
    return Holder(int(pid), command) if pid.isdigit() else None


def _acquire(fd: int, path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(BlockingIOError):
            return fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    holder = _read_holder(fd)
    who = f"`{holder.command}` (pid {holder.pid})" if holder else "another uvdock run"
    raise InputRefused(
        f"the repository is locked by {who}; waited {timeout:g} s, nothing was changed",
        hint=f"wait for it to finish, then run again (lock file: {path}; "
        "the wait is set by lock-timeout)",
    )


@contextlib.contextmanager
def held(path: Path, command: str, timeout: float) -> Iterator[Holder | None]:
    """Hold the lock at `path` for `command`; yields the note of a killed run it took over."""
    key = str(path)
    if key in _held:  # the holder is this process: an inner command, which releases nothing
        yield None
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise EnvironmentUnusable(
            f"{path}: cannot create the repository lock: {exc.strerror}"
        ) from None
    try:
        _acquire(fd, path, timeout)
        stale = _read_holder(fd)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {command}\n".encode(), 0)
        except OSError as exc:  # a full disk or a size limit: say which file
            raise EnvironmentUnusable(
                f"{path}: cannot write the repository lock: {exc.strerror}"
            ) from None
        _held.add(key)
        try:
            yield stale if stale is not None and stale.pid != os.getpid() else None
        finally:
            _held.discard(key)
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # an empty note: the lock was released, not abandoned
    finally:
        os.close(fd)  # closing the descriptor releases the flock
