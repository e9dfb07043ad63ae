"""All of uvdock's signal handling: the moments that must not be cut in half.

`as_interrupts()` (around the whole CLI, from its first import) makes a Ctrl-C or a `kill`
(SIGINT, SIGTERM) raise KeyboardInterrupt, so it ends as exit 130, never as a death by the
signal or a traceback, and ignores both once uvdock is on its way out. `interruptible()`
turns the first one into KeyboardInterrupt and only notes any later one, so the clean-up
that the first one starts (stopping what the command started, then restoring files) runs to
its end. `held()` defers both while files are swapped or restored, then raises
KeyboardInterrupt, unless an interrupt is already being handled. Children never need
shielding: each runs in a process group of its own (run/proc.py), out of the terminal's reach.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import FrameType

_DEFERRED = (signal.SIGINT, signal.SIGTERM)


class _Interrupts:
    """Process-wide: once one interrupt is being handled, later ones are only noted."""

    fired = False
    depth = 0


def _install(handler: Any) -> dict[signal.Signals, Any] | None:
    previous: dict[signal.Signals, Any] = {}
    try:
        for sig in _DEFERRED:
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: signals are not ours to handle
        for sig, old in previous.items():
            signal.signal(sig, old)
        return None
    return previous


def _reinstall(previous: dict[signal.Signals, Any] | None) -> None:
    for sig, handler in (previous or {}).items():
        signal.signal(sig, handler)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def as_interrupts() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt while the block runs; both are ignored
    after it, when uvdock is on its way out."""
    previous = _install(_raise_interrupt)
    try:
        yield
    finally:
        if previous is not None:
            _install(signal.SIG_IGN)


@contextlib.contextmanager
def held(*, reraise: bool = True) -> Iterator[None]:
    pending: list[int] = []
    previous = _install(lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        _reinstall(previous)
        if pending and reraise and not _Interrupts.fired:
            _Interrupts.fired = _Interrupts.depth > 0  # its clean-up must not be cut either
            raise KeyboardInterrupt


def _first_interrupt(signum: int, frame: FrameType | None) -> None:
    if _Interrupts.fired:
        return  # a second Ctrl-C while the first one's clean-up runs: let it finish
    _Interrupts.fired = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt once; later ones are ignored until the
    outermost block ends, and after it too when it ends by an interrupt: uvdock is then on
    its way out with 130, and an impatient second Ctrl-C must not turn that into a death
    by signal."""
    if _Interrupts.depth == 0:
        _Interrupts.fired = False
    previous = _install(_first_interrupt)
    _Interrupts.depth += 1
    try:
        yield
    finally:
        _Interrupts.depth -= 1
        if _Interrupts.depth == 0:
            _reinstall(previous)
            if _Interrupts.fired and previous is not None:
                _install(signal.SIG_IGN)
            _Interrupts.fired = False
