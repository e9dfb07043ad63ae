"""The one place where uvdock starts a process. Argv lists only, never a shell string.

Programs are looked up on PATH at call time (not at import), so a test or a user can change
PATH between calls.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import CommandFailed, EnvironmentUnusable, Interrupted


class Completed(NamedTuple):
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def which(program: str, env: Mapping[str, str] | None = None) -> str | None:
    # shutil.which would do, but importing shutil (bz2, lzma, fnmatch) costs more than this.
    for folder in (env or os.environ).get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _resolve(argv: Sequence[str], env: Mapping[str, str] | None) -> list[str]:
    if not argv:
        raise ValueError("empty argv")
    found = which(argv[0], env) if os.sep not in argv[0] else argv[0]
    if found is None:
        raise EnvironmentUnusable(f"`{argv[0]}` was not found on PATH")
    return [found, *argv[1:]]


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
    resolved = _resolve(argv, env)
    try:
        proc = subprocess.run(
            resolved,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            input=input_text,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise CommandFailed(argv, -1, message=f"{argv[0]} timed out after {timeout}s") from exc
    result = Completed(argv, proc.returncode, proc.stdout, proc.stderr)
    if check and not result.ok:
        raise CommandFailed(argv, result.returncode, result.stdout, result.stderr)
    return result


def run_bytes(argv: Sequence[str], *, cwd: Path | str | None = None) -> bytes:
    """Run to completion and return raw stdout (file contents from git, exact bytes)."""
    import subprocess

    argv = list(argv)
    proc = subprocess.run(_resolve(argv, None), cwd=cwd, capture_output=True, check=False)
    if proc.returncode != 0:
        raise CommandFailed(argv, proc.returncode, "", proc.stderr.decode(errors="replace"))
    return proc.stdout


def run_foreground(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    on_interrupt: Callable[[], None] | None = None,
    grace_seconds: float = 10.0,
) -> int:
    """Run with the terminal attached (output streams through) and return the exit code.

    Ctrl-C: the child gets SIGINT (it shares our process group); `on_interrupt` runs so the
    caller can stop what the child started elsewhere (a process inside a container); then
    we wait up to `grace_seconds` and raise Interrupted.
    """
    argv = list(argv)
    pid = _spawn(_resolve(argv, env), cwd, env)
    try:
        return _wait(pid)
    except KeyboardInterrupt:
        import signal

        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            if on_interrupt is not None:
                on_interrupt()
            if _wait_for(pid, grace_seconds) is None:
                os.kill(pid, signal.SIGKILL)
                _wait(pid)
        finally:
            signal.signal(signal.SIGINT, previous)
        raise Interrupted("interrupted") from None


# The foreground path is what `uvdock run` pays on every call. Importing `subprocess`
# (signal, selectors, threading, locale) costs more here than the whole budget for it, so
# this path forks and execs by hand; captured runs above still use subprocess.
def _spawn(argv: list[str], cwd: Path | str | None, env: Mapping[str, str] | None) -> int:
    environment = dict(os.environ if env is None else env)
    pid = os.fork()
    if pid == 0:  # the child: become the program, or exit 127 as a shell would
        try:
            if cwd is not None:
                os.chdir(cwd)
            os.execve(argv[0], argv, environment)
        finally:
            os._exit(127)
    return pid


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code  # killed by signal N: 128+N, as shells say


def _wait(pid: int) -> int:
    return _exit_code(os.waitpid(pid, 0)[1])


def _wait_for(pid: int, timeout: float) -> int | None:
    """The child's exit code, or None when it is still running after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # Ctrl-C landed just after an earlier wait reaped it
            return 130
        if done:
            return _exit_code(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)
