"""How a foreground child is stopped after Ctrl-C or SIGTERM.

The child gets the forward signal (SIGINT, as from the terminal; srun SIGTERM), unless
it already had the terminal's: a Ctrl-C goes to the terminal's whole foreground group, and
a second SIGINT would cut the command's clean-up short. The caller's `on_interrupt` stops
what the child started elsewhere (a container, processes in one), the child is waited
for (bounded), and what is left of it and its tree is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uvdock.run import signals

if TYPE_CHECKING:
    import subprocess


def from_terminal() -> bool:
    """Whether the SIGINT being handled came from a Ctrl-C on uvdock's terminal, so the
    terminal sent it to uvdock's whole process group. A SIGINT while that group is the
    terminal's foreground one is taken as such (as `uv run` does: a signal handler is not
    told who sent it); a `kill` of uvdock alone then reaches the command only as the
    grace period's SIGKILL."""
    if signals.interrupting_signal() != signal.SIGINT:
        return False
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:  # no controlling terminal
        return False
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return False
    finally:
        os.close(fd)


def descendants(root: int) -> list[tuple[int, str]]:
    """(pid, start time) of every living descendant of `root`, from /proc (Linux)."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        stat = stat_fields(int(entry))
        if stat is not None:
            children.setdefault(int(stat[1]), []).append((int(entry), stat[19]))
    found: list[tuple[int, str]] = []
    todo = [root]
    while todo:
        for pid, started in children.get(todo.pop(), []):
            found.append((pid, started))
            todo.append(pid)
    return found


def stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name: state, ppid, pgrp, ... (starttime is [19])."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return fields if len(fields) > 19 else None


class Stopper:
    """Stops a foreground child after an interrupt: the forward signal (once: not to
    those that had the terminal's), the caller's `on_interrupt` (what the child started
    elsewhere), the grace period, then SIGKILL for what is left."""

    def __init__(
        self,
        child: subprocess.Popen[Any] | None,
        whole_tree: bool,
        forward: signal.Signals,
        *,
        pgid: int | None = None,
    ) -> None:
        self.child = child
        self.forward = forward
        self.pgid = pgid
        # The terminal's Ctrl-C went to its whole foreground group: those in uvdock's own
        # group have it already, and a second SIGINT would cut their clean-up short (a
        # Python `finally`, pytest's teardown). Everyone else still gets the forward.
        self.have_it = os.getpgrp() if forward == signal.SIGINT and from_terminal() else None
        # Taken now, while orphans still hang under the child: they are found again by
        # pid and start time when the grace period is over.
        self.tree = descendants(os.getpid()) if whole_tree and child is not None else []

    def _signal(self, sig: signal.Signals) -> None:
        skip = self.have_it if sig == self.forward else None
        if self.pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, sig)  # its group: the terminal's Ctrl-C missed it
        if self.child is not None and self.child.poll() is None:
            stat = stat_fields(self.child.pid)
            if skip is None or stat is None or int(stat[2]) != skip:
                self.child.send_signal(sig)
        for pid, started in self.tree:
            stat = stat_fields(pid)
            if stat is not None and stat[19] == started and stat[0] != "Z":
                if skip is not None and int(stat[2]) == skip:
                    continue
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)

    def stop(self, on_interrupt: Callable[[], None] | None, grace_seconds: float) -> None:
        import subprocess

        self._signal(self.forward)
        if on_interrupt is not None:
            on_interrupt()
        if self.child is not None:
            try:
                self.child.wait(grace_seconds)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.child.wait()
        self._signal(signal.SIGKILL)  # what the child left behind in its tree
        if on_interrupt is not None:
            on_interrupt()
