"""Interrupt a real `uvdock run` in each placement and check that nothing it started survives.

Shared by tests/run/test_interrupts.py (one round per scenario) and bench/stress_signals.py
(many rounds). uvdock runs as a real process in its own session, as in a terminal.

The command started is `sh -c SCRIPT`: it notes that it started, sleeps for a duration that
is unique to the round (so its `sleep` is found by its command line), then writes a marker
that must never appear.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

SIGNAL_KINDS = ("ctrl-c", "sigint", "sigterm")  # group SIGINT, SIGINT alone, SIGTERM alone
# Seconds the command sleeps: far longer than any stop takes, so its late marker means it
# was never stopped, however slow the machine. Once uvdock has exited and nothing of the
# command runs, no marker can appear later: nothing waits for this long.
SLEEP = 30
_SCRIPT = ': > .started-"$0"; sleep "$1"; echo late > .late-"$0"'
UVDOCK_CONTAINER = re.compile(r"^uvdock-[0-9a-f]{12}$")


@dataclass
class Placement:
    mode: str  # exec, run, local
    repo: Path
    image: str = ""
    container: str = ""  # exec: a running container that mounts repo at /workspace

    def options(self) -> list[str]:
        if self.mode == "local":
            return ["--engine", "local"]
        if self.mode == "exec":
            return ["--engine", "podman", "--container", self.container]
        return ["--engine", "podman", "--image", self.image]


@dataclass
class Outcome:
    code: int | None
    stderr: str
    leftovers: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.code == 130 and not self.leftovers


def _send(child: subprocess.Popen[bytes], kind: str) -> None:
    if kind == "ctrl-c":
        os.killpg(child.pid, signal.SIGINT)
    else:
        child.send_signal(signal.SIGTERM if kind == "sigterm" else signal.SIGINT)


def _running(placement: Placement, token: str) -> list[str]:
    """Processes with `token` as one of their arguments, where the command ran. (A whole
    argument, not a substring: other test runs on this machine have processes of their own.)"""
    script = 'for f in /proc/[0-9]*/cmdline; do tr "\\0" "\\037" < "$f" 2>/dev/null; echo; done'
    if placement.mode == "exec":
        argv = ["podman", "exec", placement.container, "sh", "-c", script]
    else:
        argv = ["sh", "-c", script]
    lines = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
    found = [line.split("\x1f") for line in lines.splitlines()]
    return [" ".join(args).strip() for args in found if token in args]


def uvdock_containers(token: str) -> list[str]:
    """uvdock's containers (named uvdock-<12 hex>) whose command holds `token`: other
    runs on this machine have containers of their own."""
    listing = subprocess.run(
        ["podman", "ps", "-a", "--no-trunc", "--format", "{{.Names}} {{.Command}}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    rows = [line.split(" ", 1) for line in listing.splitlines() if " " in line]
    return [name for name, command in rows if UVDOCK_CONTAINER.match(name) and token in command]


def interrupt_run(placement: Placement, kind: str, tag: str, duration: str) -> Outcome:
    """One round: start, wait until the command runs, send `kind`, check what is left."""
    argv = [sys.executable, "-m", "uvdock", "--repo", str(placement.repo), *placement.options()]
    argv += ["run", "--", "sh", "-c", _SCRIPT, tag, duration]
    child = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    started = placement.repo / f".started-{tag}"
    deadline = time.monotonic() + 60
    while not started.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if child.poll() is None:
        _send(child, kind)
    try:
        _out, err = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        _out, err = child.communicate()
        return Outcome(None, err.decode(errors="replace"), ["uvdock did not exit within 60 s"])
    outcome = Outcome(child.returncode, err.decode(errors="replace"))
    if not started.exists():
        outcome.leftovers.append("the command never started")
    outcome.leftovers += [f"still running: {p}" for p in _running(placement, duration)]
    if (placement.repo / f".late-{tag}").exists():
        outcome.leftovers.append("the command ran to its end")
    if placement.mode == "run":
        outcome.leftovers += [f"container left: {n}" for n in uvdock_containers(tag)]
    return outcome


def late_markers(repo: Path) -> list[str]:
    """Markers written by a command that ran to its end."""
    return sorted(p.name for p in repo.glob(".late-*"))


CONTAINER_FAKE_UV = """#!/bin/sh
if [ "$1" = "--version" ] || [ "$2" = "--version" ]; then echo "uv 0.13.9"; exit 0; fi
printf 'half written by a slow uv\\n' > uv.lock
: > /uvdock-signal/started
exec sleep 120
"""


def start_resolve_in_container(
    repo: Path, tmp_path: Path, options: list[str]
) -> tuple[subprocess.Popen[bytes], Path]:
    """`lock resolve` in a real podman container whose uv is a slow fake mounted over the
    image's (the engine, the container and the signals are real)."""
    signal_dir = tmp_path / "signal"
    signal_dir.mkdir(exist_ok=True)
    fake = tmp_path / "container-uv"
    fake.write_text(CONTAINER_FAKE_UV)
    fake.chmod(0o755)
    env = dict(os.environ)
    env["UVDOCK_ENGINE_ARGS"] = f"-v {fake}:/usr/local/bin/uv:ro -v {signal_dir}:/uvdock-signal"
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), *options]
    argv += ["lock", "resolve", "--onto", "main", "--no-fetch"]
    child = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    started = signal_dir / "started"
    deadline = time.monotonic() + 90
    while not started.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            _out, err = child.communicate()
            raise AssertionError(f"the slow uv never started ({child.returncode}): {err.decode()}")
        time.sleep(0.05)
    return child, started


def read_terminal(master: int, until: bytes | None = None) -> bytes:
    """What a pty's other side printed, read until it closes (or until `until` is seen)."""
    output = b""
    while until is None or until not in output:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the last process holding the terminal has exited
            break
        if not chunk:
            break
        output += chunk
    return output
