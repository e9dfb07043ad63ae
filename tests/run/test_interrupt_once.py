"""One interrupt, one SIGINT: every process of the command gets it, and gets it once.

A terminal's Ctrl-C sends SIGINT to each process of the foreground group, once. The
command here is `sh -c 'python3 ...'`: the Python grandchild counts the SIGINTs that reach
it, keeps running through a clean-up window (where a second one would cut a `finally` or
pytest's teardown short) and writes the count. Seen before: in a run container only `sh`
got the interrupt (the engine's signal proxy reaches init's one child), so the grandchild
ran on until the kill; with --engine local on a terminal the child got the terminal's SIGINT
and uvdock's forward of it. Real podman, a real pty where there is a terminal.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import engine_name, init_repo, remove_container, start_container
from samples.interrupts import Placement, read_terminal

pytestmark = pytest.mark.engine

COUNTER = """
import signal, sys, time
tag, got = sys.argv[1], []
signal.signal(signal.SIGINT, lambda number, frame: got.append(number))
open(".started-" + tag, "w").close()
deadline = time.monotonic() + 30
while not got and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.3)
with open(".sigints-" + tag, "w") as out:
    out.write(str(len(got)))
"""
SCRIPT = 'python3 -c "$1" "$0"'


@pytest.fixture(scope="module")
def mounted(engine_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Placement]:
    repo = init_repo(tmp_path_factory.mktemp("interrupt-once") / "repo")
    name = engine_name("test-interrupt-once")
    start_container(engine_image, repo, name)
    yield Placement("exec", repo, image=engine_image, container=name)
    remove_container(name)


def _argv(placement: Placement, tag: str) -> list[str]:
    # -v: how uvdock stopped the command is in the failure's message
    argv = [sys.executable, "-m", "uvdock", "-v", "--repo", str(placement.repo)]
    return [*argv, *placement.options(), "run", "--", "sh", "-c", SCRIPT, tag, COUNTER]


def _wait_for(path: Path, alive: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        assert alive is None or alive.poll() is None, alive.communicate()[1].decode()
        time.sleep(0.02)


def _sigints(repo: Path, tag: str) -> str:
    counted = repo / f".sigints-{tag}"
    deadline = time.monotonic() + 15  # written before uvdock exits; this only bounds a failure
    while not counted.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return counted.read_text() if counted.exists() else "none (killed before its clean-up)"


@pytest.mark.parametrize("mode", ["exec", "run", "local"])
def test_ctrl_c_on_a_terminal_reaches_the_command_once(mounted: Placement, mode: str) -> None:
    placement = Placement(mode, mounted.repo, mounted.image, mounted.container)
    tag = f"pty-{mode}-{time.monotonic_ns()}"
    pid, master = pty.fork()
    if pid == 0:  # uvdock, with the pty as its controlling terminal, in the foreground
        os.execv(sys.executable, _argv(placement, tag))
    try:
        _wait_for(placement.repo / f".started-{tag}")
        os.write(master, b"\x03")
        output = read_terminal(master).decode(errors="replace")
        os.waitpid(pid, 0)
    finally:
        os.close(master)
    assert _sigints(placement.repo, tag) == "1", output


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("run", "ctrl-c"),  # no terminal: the group's signal, as a CI runner sends it
        ("exec", "ctrl-c"),
        ("run", "sigterm"),
        ("exec", "sigterm"),
        ("local", "sigterm"),
        ("local", "sigint"),
    ],
)
def test_an_interrupt_without_a_terminal_reaches_the_command_once(
    mounted: Placement, mode: str, kind: str
) -> None:
    placement = Placement(mode, mounted.repo, mounted.image, mounted.container)
    tag = f"{kind}-{mode}-{time.monotonic_ns()}"
    child = subprocess.Popen(
        _argv(placement, tag),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    _wait_for(placement.repo / f".started-{tag}", child)
    if kind == "ctrl-c":
        os.killpg(child.pid, signal.SIGINT)
    else:
        child.send_signal(signal.SIGTERM if kind == "sigterm" else signal.SIGINT)
    _out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err.decode()
    assert _sigints(placement.repo, tag) == "1", err.decode()
