"""Signal handling for the moments that must not be cut in half.

`held()` defers Ctrl-C and `kill` (SIGTERM) while files are swapped or restored, then raises
KeyboardInterrupt so the usual path (restore, exit 130) runs. `sigterm_as_interrupt()`
makes a `kill` take the same path as Ctrl-C during a long step.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType
from typing import Any

_DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def held() -> Iterator[None]:
    pending: list[int] = []
    previous: dict[signal.Signals, Any] = {}
    try:
        for sig in _DEFERRED:
            previous[sig] = signal.signal(sig, lambda signum, frame: pending.append(signum))
    except ValueError:  # not the main thread: signals are not ours to hold
        pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if pending:
            raise KeyboardInterrupt


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    try:
        previous: Any = signal.signal(signal.SIGTERM, _raise_interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
