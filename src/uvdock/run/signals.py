"""Signal handling for the moments that must not be cut in half.

`interruptible()` turns the first Ctrl-C or `kill` (SIGINT, SIGTERM) into KeyboardInterrupt
and only notes any later one, so the clean-up that the first one starts (stopping what the
command started, then restoring files) runs to its end. `held()` defers both signals while
files are swapped or restored, then raises KeyboardInterrupt, unless an interrupt is already
being handled. `terminate_as_interrupt()` (around all of `uvdock.cli.main.main`) makes a `kill`
that lands before any of that an interrupt too: exit 130, never death by the signal.
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
    holding = 0  # nested held() blocks
    signum = 0  # the signal of the interrupt being handled


def interrupting_signal() -> int:
    """The signal (SIGINT, SIGTERM) that raised the KeyboardInterrupt being handled."""
    return _Interrupts.signum


def shield_children() -> bool:
    """Whether a short helper process started now must be immune to Ctrl-C: while files
    are restored or an interrupt is cleaned up, a second Ctrl-C (sent to the terminal's
    whole process group) must not kill the `git update-index` or `podman stop` doing it."""
    return _Interrupts.fired or _Interrupts.holding > 0


@contextlib.contextmanager
def shielded_spawn() -> Iterator[dict[str, int]]:
    """When `shield_children()`: the keyword arguments that start the helper in a process
    group of its own (`process_group=0`), so the terminal's Ctrl-C never reaches it (git
    installs its own SIGINT handler, which drops its lock file mid-write). SIGINT and
    SIGTERM are ignored meanwhile: an ignored disposition survives fork and exec, so one
    landing before the helper left uvdock's group is ignored too."""
    if not shield_children():
        yield {}
        return
    previous = _install(signal.SIG_IGN)
    try:
        yield {"process_group": 0}
    finally:
        _reinstall(previous)


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


@contextlib.contextmanager
def held(*, reraise: bool = True) -> Iterator[None]:
    pending: list[int] = []
    previous = _install(lambda signum, frame: pending.append(signum))
    _Interrupts.holding += 1
    try:
        yield
    finally:
        _Interrupts.holding -= 1
        _reinstall(previous)
        if pending and reraise and not _Interrupts.fired:
            _Interrupts.fired = _Interrupts.depth > 0  # its clean-up must not be cut either
            _Interrupts.signum = pending[0]
            raise KeyboardInterrupt


def _first_interrupt(signum: int, frame: FrameType | None) -> None:
    if _Interrupts.fired:
        return  # a second Ctrl-C while the first one's clean-up runs: let it finish
    _Interrupts.fired = True
    _Interrupts.signum = signum
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
                for sig in _DEFERRED:
                    signal.signal(sig, signal.SIG_IGN)
            _Interrupts.fired = False


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the block runs, as Ctrl-C does (outside the
    main thread, where signals are not ours to handle, nothing changes)."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    except ValueError:  # not the main thread (an embedding caller)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
