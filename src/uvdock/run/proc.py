"""The door for every process that runs in or drives the container: built on plumbum.

Argv lists only, never a shell string. Programs are looked up on the PATH of the
environment given, at call time (not at import), and that environment is passed exactly:
plumbum's `local.env` is a copy taken when plumbum is imported, so it is replaced for the
duration of each start. plumbum is imported here only, and this module only on process
paths (`--version`, `image check`, `image show` never import it: see bench/startup.py).

Interrupts: `run_foreground` turns the first Ctrl-C or SIGTERM into a clean stop
(run/interrupt.py), and only then raises Interrupted, so the caller restores files after
nothing it started is running any more.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from uvdock.errors import CommandFailed, EnvironmentUnusable, Interrupted
from uvdock.run import interrupt, signals
from uvdock.run.captured import Completed

__all__ = [
    "Completed",
    "exit_code",
    "forwarded_signal",
    "run",
    "run_foreground",
    "which",
]

if TYPE_CHECKING:
    import subprocess


def which(program: str, env: Mapping[str, str] | None = None) -> str | None:
    # shutil.which would do, but importing shutil (bz2, lzma, fnmatch) costs more than this.
    for folder in (env or os.environ).get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _resolve(argv: Sequence[str], env: Mapping[str, str]) -> str:
    if not argv:
        raise ValueError("empty argv")
    found = which(argv[0], env) if os.sep not in argv[0] else argv[0]
    if found is None:
        raise EnvironmentUnusable(f"`{argv[0]}` was not found on PATH")
    return found


def exit_code(returncode: int) -> int:
    """Killed by signal N: 128+N, as shells say."""
    return 128 - returncode if returncode < 0 else returncode


def _popen(
    argv: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: Path | str | None,
    **streams: Any,
) -> subprocess.Popen[Any]:
    local = _plumbum_local()
    environment = dict(os.environ if env is None else env)
    program = local[_resolve(argv, environment)][list(argv[1:])]
    with local.env():
        local.env.clear()
        local.env.update(environment)
        try:
            child = program.popen(cwd=str(cwd or os.getcwd()), **streams)
        except OSError as exc:  # found but could not be executed (bad #!, no permission)
            raise _NotStarted(argv, exc) from exc
    return cast("subprocess.Popen[Any]", child)


def _plumbum_local() -> Any:
    """plumbum's local machine, imported without the `uname -p` child process.

    plumbum's LocalMachine reads `platform.uname()[0]` when it is imported, and indexing a
    uname result computes its lazy `processor` field by running `uname -p`: about 30 ms on
    every command that starts a process (bench/startup.py's `run -- true`). Nothing reads
    the processor, so it is filled in first as Python would on most Linux systems.
    """
    import platform

    platform.uname().__dict__.setdefault("processor", "")
    from plumbum import local

    return local


class _NotStarted(Exception):
    """The program could not be executed: a shell would say 127 (not found) or 126."""

    def __init__(self, argv: Sequence[str], error: OSError) -> None:
        super().__init__(f"{argv[0]}: {error.strerror or error}")
        self.code = 127 if isinstance(error, FileNotFoundError) else 126


def run(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    input_text: str | None = None,
    timeout: float | None = None,
) -> Completed:
    """Run to completion, capturing stdout and stderr as text."""
    import subprocess

    argv = list(argv)
    stdin = subprocess.PIPE if input_text else subprocess.DEVNULL
    try:
        with signals.shielded_spawn() as shield:  # a restore's helpers: see signals
            child = _popen(argv, env, cwd, stdin=stdin, **shield)
    except _NotStarted as failed:
        if check:
            raise CommandFailed(argv, failed.code, "", str(failed)) from None
        return Completed(argv, failed.code, "", str(failed))
    try:
        out, err = child.communicate(input_text.encode() if input_text else None, timeout)
    except subprocess.TimeoutExpired as exc:
        child.kill()
        child.communicate()
        raise CommandFailed(argv, -1, message=f"{argv[0]} timed out after {timeout}s") from exc
    except BaseException:
        child.kill()
        child.wait()
        raise
    result = Completed(
        argv,
        exit_code(child.returncode),
        out.decode(errors="replace"),
        err.decode(errors="replace"),
    )
    if check and not result.ok:
        raise CommandFailed(argv, result.returncode, result.stdout, result.stderr)
    return result


def forwarded_signal(mode: str) -> signal.Signals:
    """The signal that stops a foreground child of placement `mode` cleanly: srun cancels its
    tasks on SIGTERM (a single SIGINT only prints the job's state); everything else takes
    SIGINT, as from the terminal (an engine client without a signal proxy just exits: the
    command in its container is interrupted by `on_interrupt`)."""
    return signal.SIGTERM if mode == "srun" else signal.SIGINT


def run_foreground(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    on_interrupt: Callable[[], None] | None = None,
    grace_seconds: float = 10.0,
    forward: signal.Signals = signal.SIGINT,
    whole_tree: bool = False,
    own_group: bool = False,
    record_group: Callable[[int], None] | None = None,
) -> int:
    """Run with the terminal attached (output streams through) and return the exit code.

    On Ctrl-C or SIGTERM: see the module docstring. `on_interrupt` runs once while the
    child may still run and once after it ended (a container created late is caught too).
    `whole_tree`: the signal goes to every process the child started, as a terminal's
    Ctrl-C would, and what is left after the grace period is killed (a local uv's own
    children); otherwise only to the child (an engine CLI, whose container is stopped by
    `on_interrupt`). The child stays in uvdock's process group, so a kill of the group
    from outside reaches it too, unless `own_group`: then the terminal's signals reach
    uvdock only (the child's stdin is /dev/null, as it may not read the terminal). With
    `record_group` the child also runs in a process group of its own (everything it starts
    stays in it), led by a placeholder whose pgid is handed to `record_group(pgid)` before
    the child starts, so that a caller can record the group and stop it after uvdock itself
    was killed (`lock resolve --abort`). Signals then go to that group.
    """
    argv = list(argv)
    child: subprocess.Popen[Any] | None = None
    leader: subprocess.Popen[Any] | None = None
    terminal = _terminal_settings()
    with signals.interruptible():
        try:
            with signals.held():  # a signal during the start is handled once `child` is known
                streams: dict[str, Any] = {"stdin": None, "stdout": None, "stderr": None}
                if record_group is not None:
                    leader = _group_leader(env)
                    record_group(leader.pid)  # recorded before anything of the child runs
                    streams["process_group"] = leader.pid
                elif own_group:
                    import subprocess

                    streams.update(stdin=subprocess.DEVNULL, process_group=0)
                child = _popen(argv, env, cwd, **streams)
            return exit_code(child.wait())
        except _NotStarted as failed:
            sys.stderr.write(f"{failed}\n")
            return failed.code
        except KeyboardInterrupt:
            pgid = leader.pid if leader is not None else None
            stopper = interrupt.Stopper(child, whole_tree, forward, pgid=pgid)
            stopper.stop(on_interrupt, grace_seconds)
            _restore_terminal(terminal)
            raise Interrupted("interrupted") from None
        finally:
            if leader is not None:
                leader.kill()
                leader.wait()


# Waits while uvdock ($0) lives: a killed uvdock leaves no idle placeholder behind (the
# group lives on as long as the child or anything it started does).
_LEADER = 'while kill -0 "$0" 2>/dev/null; do sleep 1; done'


def _group_leader(env: Mapping[str, str] | None) -> subprocess.Popen[Any]:
    """A placeholder that leads a new process group and only waits: its group exists, and
    can be recorded, before the real child is started into it."""
    import subprocess

    shell = which("sh", env) or "/bin/sh"
    return subprocess.Popen(
        [shell, "-c", _LEADER, str(os.getpid())],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        process_group=0,
    )


def _terminal_settings() -> list[Any] | None:
    """The user's terminal settings, when stdin is one: `podman exec|run -t` makes it raw."""
    try:
        import termios

        return termios.tcgetattr(sys.stdin.fileno()) if sys.stdin.isatty() else None
    except (OSError, ValueError, ImportError, AttributeError):
        return None


def _restore_terminal(settings: list[Any] | None) -> None:
    """Give the terminal back as it was: podman 4.3 interrupted by a SIGINT it did not get
    from the terminal (uvdock forwards a SIGTERM so) exits leaving it raw, and the user's
    shell then echoes nothing. Only from the foreground process group (else SIGTTOU)."""
    if settings is None:
        return
    import termios  # present wherever _terminal_settings returned settings

    try:
        fd = sys.stdin.fileno()
        if os.tcgetpgrp(fd) == os.getpgrp():
            termios.tcsetattr(fd, termios.TCSADRAIN, settings)
    except (OSError, ValueError, termios.error):
        return
