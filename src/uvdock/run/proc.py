"""The one door for processes: quick captured calls (`run`) and foreground runs. Argv lists
only; programs are looked up on the PATH of the environment given, passed exactly.

Every child leads a process group of its own: the terminal's Ctrl-C and a `kill` of
uvdock's group reach uvdock only, which passes exactly one signal on, to the child's whole
group. An interactive child (a shell on the user's terminal) gets the terminal's foreground
instead. A child ends when uvdock dies (an engine client must not hold the terminal or the
pipes of whoever ran uvdock), unless its group is recorded to be stopped later."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from uvdock.errors import CommandFailed, EnvironmentUnusable, Interrupted
from uvdock.run import signals

if TYPE_CHECKING:
    import subprocess
    import threading


class Completed(NamedTuple):
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def said(self) -> str:
        """What it said last: the last line of stderr, else its exit code."""
        return (self.stderr.strip().splitlines() or [f"exit {self.returncode}"])[-1]


def which(program: str, env: Mapping[str, str] | None = None) -> str | None:
    # shutil.which would do, but importing shutil (bz2, lzma, fnmatch) costs more than this.
    for folder in (env or os.environ).get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def exit_code(returncode: int) -> int:
    """Killed by signal N: 128+N, as shells say."""
    return 128 - returncode if returncode < 0 else returncode


class _NotStarted(Exception):
    """The program could not be executed: a shell would say 127 (not found) or 126."""

    def __init__(self, argv: Sequence[str], error: OSError) -> None:
        super().__init__(f"{argv[0]}: {error.strerror or error}")
        self.code = 127 if isinstance(error, FileNotFoundError) else 126


def _start(
    argv: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: Path | str | None,
    *,
    group: int = 0,
    foreground: int | None = None,
    quick: bool = False,
    death: signal.Signals = signal.SIGKILL,
    **streams: Any,
) -> subprocess.Popen[bytes]:
    """Start `argv` in process group `group` (0: a new one it leads, which gets `death` when
    uvdock dies, unless `quick`: a captured call, started the fast way; another group
    outlives uvdock). `foreground`: the terminal it gets."""
    import subprocess

    environment = dict(os.environ if env is None else env)
    program = which(argv[0], environment) if os.sep not in argv[0] else argv[0]
    if program is None:
        raise EnvironmentUnusable(f"`{argv[0]}` was not found on PATH")
    parent = os.getpid()

    def in_child() -> None:
        os.setpgid(0, group)
        if not group:
            _libc().prctl(1, death)  # PR_SET_PDEATHSIG
            if os.getppid() != parent:  # uvdock died before that
                os.kill(os.getpid(), signal.SIGKILL)
        if foreground is not None:
            _give_terminal(foreground, os.getpgrp())

    how: dict[str, Any] = {"process_group": 0} if quick else {"preexec_fn": in_child}
    try:
        child = subprocess.Popen([program, *argv[1:]], env=environment, cwd=cwd, **how, **streams)
    except OSError as exc:  # found but could not be executed (bad #!, no permission)
        raise _NotStarted(argv, exc) from exc
    if foreground is not None:  # as shells do: in both, whichever runs first
        _give_terminal(foreground, child.pid)
    return child


@functools.cache
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _give_terminal(fd: int, pgid: int) -> None:
    """Make `pgid` the foreground group of terminal `fd` (from a background group too)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTTOU])
    try:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(fd, pgid)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTTOU])


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def run(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    input_text: str | None = None,
    timeout: float | None = None,
) -> Completed:
    """Run to completion, capturing stdout and stderr as text (exact: no newline changes)."""
    argv = list(argv)
    data = input_text.encode() if input_text is not None else None
    code, out, err = _captured(argv, cwd, env, data, timeout)
    result = Completed(argv, code, out.decode(errors="replace"), err.decode(errors="replace"))
    if check and not result.ok:
        raise CommandFailed(argv, code, result.stdout, result.stderr)
    return result


def ask(argv: Sequence[str], env: Mapping[str, str], timeout: float = 30) -> Completed:
    """A question to a program whose answer is read, never a failure: one that timed out
    answers with exit -1 (no real exit code is negative: see exit_code)."""
    try:
        return run(argv, env=env, check=False, timeout=timeout)
    except CommandFailed as exc:
        return Completed(list(argv), -1, "", exc.message)


def run_bytes(argv: Sequence[str], *, cwd: Path | str | None = None) -> bytes:
    """Run to completion and return raw stdout (file contents from git, exact bytes)."""
    code, out, err = _captured(list(argv), cwd, None, None, None)
    if code != 0:
        raise CommandFailed(list(argv), code, "", err.decode(errors="replace"))
    return out


def _captured(
    argv: list[str],
    cwd: Path | str | None,
    env: Mapping[str, str] | None,
    data: bytes | None,
    timeout: float | None,
) -> tuple[int, bytes, bytes]:
    import subprocess

    stdin = subprocess.PIPE if data else subprocess.DEVNULL
    pipe = subprocess.PIPE
    try:
        child = _start(argv, env, cwd, quick=True, stdin=stdin, stdout=pipe, stderr=pipe)
    except _NotStarted as failed:
        return failed.code, b"", str(failed).encode()
    try:
        out, err = child.communicate(data or None, timeout)
    except subprocess.TimeoutExpired as exc:
        _killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise CommandFailed(argv, -1, message=f"{argv[0]} timed out after {timeout}s") from exc
    except BaseException:
        _killpg(child.pid, signal.SIGKILL)
        child.wait()
        raise
    return exit_code(child.returncode), out, err


# The signal that stops a foreground child of a placement cleanly (SIGINT, as from the
# terminal, where not named): srun cancels its tasks on SIGTERM (a single SIGINT only prints
# the job's state); a run container's engine client gets none (its container is interrupted
# through the engine: run/stop.py).
FORWARDED: dict[str, signal.Signals | None] = {"srun": signal.SIGTERM, "run": None}


def run_foreground(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    on_interrupt: Callable[[], None] | None = None,
    grace_seconds: float = 10.0,
    forward: signal.Signals | None = signal.SIGINT,
    interactive: bool = False,
    record_group: Callable[[int], None] | None = None,
    first_line: Callable[[bytes], bytes] | None = None,
    on_death: Sequence[str] = (),
) -> int:
    """Run with the output streaming through and return the exit code. `interactive`: the
    child gets uvdock's terminal (stdin, the foreground), else never a terminal stdin. On
    the first Ctrl-C or SIGTERM: see _stop, then Interrupted. `record_group`: the child
    runs in the group of a placeholder whose pgid it hears before the child starts, to be
    stopped after uvdock itself was killed (`lock resolve --abort`); it outlives uvdock.
    `first_line` gets the first line of the child's stderr, returns what to show of it.
    `on_death` runs should uvdock die while the child runs (see _watcher)."""
    import subprocess

    child: subprocess.Popen[bytes] | None = None
    leader: subprocess.Popen[bytes] | None = None
    terminal, watcher = _terminal() if interactive else None, _watcher(on_death, env)
    with signals.interruptible():
        try:
            with signals.held():  # a signal during the start is handled once `child` is known
                stdin = None if interactive or not sys.stdin.isatty() else subprocess.DEVNULL
                stderr = None if first_line is None else subprocess.PIPE
                if record_group is not None:  # a placeholder leads the group meanwhile
                    leader = _start(["sleep", "2147483647"], env, None, stdin=subprocess.DEVNULL)
                    record_group(leader.pid)  # recorded before anything of the child runs
                group = leader.pid if leader is not None else 0
                fd = terminal[0] if terminal else None
                # A child whose clean stop is SIGTERM (srun cancels its step, pyxis cleans up)
                # gets it if uvdock dies; any other is killed.
                death = signal.SIGTERM if forward == signal.SIGTERM else signal.SIGKILL
                how: dict[str, Any] = {"group": group, "foreground": fd, "death": death}
                child = _start(argv, env, cwd, **how, stdin=stdin, stderr=stderr)
                relay = _relay(child, first_line)
            code = exit_code(child.wait())
            if relay is not None:
                relay.join(5)  # the rest of what it said
            return code
        except _NotStarted as failed:
            sys.stderr.write(f"{failed}\n")
            return failed.code
        except KeyboardInterrupt:
            group = leader.pid if leader is not None else child.pid if child else 0
            _stop(group, child, forward, on_interrupt, grace_seconds)
            raise Interrupted("interrupted") from None
        finally:
            if leader is not None:
                leader.kill()
                leader.wait()
            if watcher is not None:
                watcher.communicate(b"\n")  # uvdock outlived the child: nothing to do
            _take_back(terminal)


def _watcher(
    on_death: Sequence[str], env: Mapping[str, str] | None
) -> subprocess.Popen[bytes] | None:
    """A process that runs `on_death` if uvdock dies first, whatever killed it: it waits on
    a pipe only uvdock holds, which the kernel closes with uvdock. (The engine client's
    death is no message to a container: conmon holds its terminal, and rootless podman's
    outer process dies of any signal without passing it on.)"""
    import subprocess

    if not on_death:
        return None
    argv = ["sh", "-c", 'read _ || exec "$@"', "sh", *on_death]
    quiet = subprocess.DEVNULL
    return _start(argv, env, None, quick=True, stdin=subprocess.PIPE, stdout=quiet, stderr=quiet)


def _stop(
    group: int,
    child: subprocess.Popen[bytes] | None,
    forward: signal.Signals | None,
    on_interrupt: Callable[[], None] | None,
    grace_seconds: float,
) -> None:
    """The child's group gets `forward` once; what it started elsewhere is stopped; what is
    left of the group after the grace period (the child's orphans too) is killed."""
    import subprocess

    if group and forward is not None:
        _killpg(group, forward)
    stop_elsewhere = on_interrupt or (lambda: None)
    stop_elsewhere()
    if child is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(grace_seconds)
    if group:
        _killpg(group, signal.SIGKILL)
    if child is not None:
        child.wait()
    stop_elsewhere()  # a container created late


def _relay(
    child: subprocess.Popen[bytes], first_line: Callable[[bytes], bytes] | None
) -> threading.Thread | None:
    """Pass the child's stderr pipe on to uvdock's, its first line through `first_line`."""
    import threading

    if child.stderr is None or first_line is None:
        return None

    def copy(pipe: IO[bytes]) -> None:
        with pipe:
            data = first_line(pipe.readline())
            while data or (data := pipe.read1(65536)):  # type: ignore[attr-defined]
                data = data[os.write(2, data) :]

    thread = threading.Thread(target=copy, args=(child.stderr,), daemon=True)
    thread.start()
    return thread


def _terminal() -> tuple[int, list[Any]] | None:
    """stdin's fd and settings, when it is the terminal whose foreground group uvdock's is."""
    import termios

    with contextlib.suppress(OSError, ValueError, AttributeError, termios.error):
        fd = sys.stdin.fileno()
        if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
            return fd, termios.tcgetattr(fd)
    return None


def _take_back(terminal: tuple[int, list[Any]] | None) -> None:
    """The terminal's foreground back to uvdock, as it was: `podman exec|run -t` makes it
    raw, and podman 4.3 interrupted by a signal it did not get from the terminal exits
    leaving it so (the user's shell then echoes nothing)."""
    import termios

    if terminal is not None:
        _give_terminal(terminal[0], os.getpgrp())
        with contextlib.suppress(termios.error):
            termios.tcsetattr(terminal[0], termios.TCSADRAIN, terminal[1])
