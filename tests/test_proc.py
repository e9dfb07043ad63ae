"""run.proc, the process door: exit codes, interrupts, and the environment passed exactly."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from uvdock.errors import CommandFailed, EnvironmentUnusable, Interrupted
from uvdock.run import proc


@pytest.fixture(autouse=True)
def _handlers_back() -> Iterator[None]:
    # After an interrupt uvdock ignores further ones on its way out; pytest needs them.
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGINT, before[0])
    signal.signal(signal.SIGTERM, before[1])


@pytest.mark.parametrize(("script", "code"), [("exit 0", 0), ("exit 1", 1), ("exit 7", 7)])
def test_exit_codes(script: str, code: int) -> None:
    assert proc.run_foreground(["sh", "-c", script]) == code
    assert proc.run(["sh", "-c", script], check=False).returncode == code


def test_a_missing_program_is_127_from_a_shell_and_refused_by_name() -> None:
    assert proc.run_foreground(["sh", "-c", "no-such-program-uvdock"]) == 127
    with pytest.raises(EnvironmentUnusable, match="no-such-program-uvdock"):
        proc.run(["no-such-program-uvdock"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGUSR1])
def test_killed_by_signal_n_is_128_plus_n(sig: signal.Signals) -> None:
    assert proc.run_foreground(["sh", "-c", f"kill -{sig.value} $$"]) == 128 + sig.value
    assert proc.run(["sh", "-c", f"kill -{sig.value} $$"], check=False).returncode == 128 + sig


def test_command_failed_keeps_argv_code_and_output() -> None:
    with pytest.raises(CommandFailed) as failed:
        proc.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert failed.value.argv == ["sh", "-c", "echo out; echo err >&2; exit 3"]
    assert (failed.value.returncode, failed.value.stdout, failed.value.stderr) == (
        3,
        "out\n",
        "err\n",
    )
    assert failed.value.exit_code == 1


def test_environment_is_passed_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    # Set after uvdock was imported: today's os.environ counts, nothing else leaks in.
    monkeypatch.setenv("UVDOCK_LEAK_PROBE", "leaked")
    env = {"PATH": os.environ["PATH"], "ONLY_THIS": "yes"}
    out = proc.run(["sh", "-c", "env"], env=env).stdout
    assert "ONLY_THIS=yes" in out and "UVDOCK_LEAK_PROBE" not in out
    default = proc.run(["sh", "-c", "echo $UVDOCK_LEAK_PROBE"]).stdout
    assert default == "leaked\n"  # no env given: today's os.environ, not import time's


def test_programs_are_looked_up_on_the_given_path_at_call_time(tmp_path: Path) -> None:
    tool = tmp_path / "uvdock-probe-tool"
    tool.write_text("#!/bin/sh\necho found\n")
    tool.chmod(0o755)
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    assert proc.run(["uvdock-probe-tool"], env=env).stdout == "found\n"
    assert proc.which("uvdock-probe-tool") is None


def test_input_and_timeout() -> None:
    assert proc.run(["cat"], input_text="hello\n").stdout == "hello\n"
    with pytest.raises(CommandFailed, match="timed out"):
        proc.run(["sleep", "5"], timeout=0.2)


def _gone(pid: int) -> bool:
    """No such process, or a zombie waiting for its (new) parent to reap it."""
    for _ in range(50):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        if stat[stat.rfind(")") + 2] in "ZX":
            return True
        time.sleep(0.02)
    return False


def _interrupt_later(sig: signal.Signals, delay: float = 0.4) -> None:
    threading.Timer(delay, os.kill, (os.getpid(), sig)).start()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_during_a_wait_stops_the_child_first(
    sig: signal.Signals, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    stopped: list[bool] = []
    _interrupt_later(sig)
    started = time.monotonic()
    with pytest.raises(Interrupted):
        proc.run_foreground(
            ["sh", "-c", f"echo $$ > {pid_file}; sleep 30"],
            on_interrupt=lambda: stopped.append(True),
        )
    assert time.monotonic() - started < 10
    assert stopped == [True, True]  # while the child may run, and again after it ended
    assert _gone(int(pid_file.read_text()))


def test_a_child_that_ignores_sigint_is_killed_after_the_grace(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = f"trap '' INT; echo $$ > {pid_file}; while :; do sleep 0.1; done"
    _interrupt_later(signal.SIGINT)
    started = time.monotonic()
    with pytest.raises(Interrupted):
        proc.run_foreground(["sh", "-c", script], grace_seconds=1.0)
    assert 1.0 <= time.monotonic() - started < 10
    assert _gone(int(pid_file.read_text()))


def test_grandchildren_are_stopped_too(tmp_path: Path) -> None:
    # A background job of a non-interactive shell ignores SIGINT: only the kill reaches it.
    pid_file = tmp_path / "pid"
    _interrupt_later(signal.SIGTERM)
    with pytest.raises(Interrupted):
        proc.run_foreground(
            ["sh", "-c", f"sleep 30 & echo $! > {pid_file}; wait"],
            grace_seconds=1.0,
        )
    assert _gone(int(pid_file.read_text()))


def test_signal_handlers_are_put_back() -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    proc.run_foreground(["true"])
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_a_program_that_cannot_be_executed_is_126_like_a_shell(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    assert proc.run_foreground([str(broken)]) == 127  # its interpreter is missing: ENOENT
    (tmp_path / "plain").write_text("data")
    (tmp_path / "plain").chmod(0o644)
    assert proc.run([str(tmp_path / "plain")], check=False).returncode == 126


def test_sigterm_before_any_process_is_exit_130(tmp_path: Path) -> None:
    # uvdock is killed while it reads its input (here: a log from a pipe that never ends),
    # before it has started anything: still exit 130, not death by the signal.
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen(
        [sys.executable, "-m", "uvdock", "doctor", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    time.sleep(1.0)  # well past start-up: blocked reading stdin
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130, err.decode()
    assert b"interrupted" in err and b"Traceback" not in err


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_an_interrupt_while_the_cli_loads_is_exit_130(sig: str) -> None:
    # The console script's own target is run with the signal landing exactly while
    # uvdock.cli.main is imported (about half of start-up): exit 130, no traceback, no death by it.
    import subprocess
    import sys
    import tomllib

    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    target = tomllib.loads(pyproject.read_text())["project"]["scripts"]["uvdock"]
    module, _, function = target.partition(":")
    script = f"""
import importlib, os, signal, sys
class SignalWhileTheCliLoads:
    def find_spec(self, name, path=None, target=None):
        if name == "uvdock.cli.main":
            os.kill(os.getpid(), signal.{sig})
        return None
sys.meta_path.insert(0, SignalWhileTheCliLoads())
sys.argv = ["uvdock", "--version"]
sys.exit(getattr(importlib.import_module({module!r}), {function!r})())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "interrupted" in done.stderr and "Traceback" not in done.stderr


def test_starting_a_process_spawns_no_uname(tmp_path: Path) -> None:
    # A process library that indexes platform.uname() runs `uname -p` on import: a child
    # process on every uvdock run.
    import subprocess
    import sys

    probe = tmp_path / "bin"
    probe.mkdir()
    marker = tmp_path / "uname-ran"
    (probe / "uname").write_text(f'#!/bin/sh\ntouch {marker}\nexec /bin/uname "$@"\n')
    (probe / "uname").chmod(0o755)
    code = "from uvdock.run import proc; proc.run(['true'])"
    env = {**os.environ, "PATH": f"{probe}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert not marker.exists()
