"""All of uvdock's signal handling (SIGINT, SIGTERM): the moments that must not be cut in
half. `held()` defers both while files are swapped or restored, then raises KeyboardInterrupt,
unless an interrupt is already being handled. Children never need shielding: each runs in a
process group of its own (run/proc.py), out of the terminal's reach."""

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
    try:
        return {sig: signal.signal(sig, handler) for sig in _DEFERRED}
    except ValueError:  # not the main thread (the first call fails): not ours to handle
        return None


def _reinstall(previous: dict[signal.Signals, Any] | None) -> None:
    for sig, handler in (previous or {}).items():
        signal.signal(sig, handler)


@contextlib.contextmanager
def as_interrupts() -> Iterator[None]:
    """Around the whole CLI: a Ctrl-C or a `kill` raises KeyboardInterrupt (exit 130, never a
    death by the signal or a traceback); both are ignored after it, on the way out."""
    previous = _install(signal.default_int_handler)  # raises KeyboardInterrupt
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
    """The first interrupt raises KeyboardInterrupt, later ones are ignored until the
    outermost block ends (the clean-up the first one starts runs to its end), and after it
    when it ended by one: an impatient second Ctrl-C must not turn exit 130 into a death."""
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
