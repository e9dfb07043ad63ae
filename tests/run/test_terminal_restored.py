"""A `kill` (SIGTERM) of uvdock while a container runs on the user's terminal gives the
terminal back as it was.

On a terminal the container gets a tty (`podman exec|run -t`): podman puts the terminal in
raw mode and restores it when the container's process ends. uvdock turns SIGTERM into a
SIGINT for podman; podman 4.3 then exits without restoring it, and the shell the user
returns to echoes nothing and prints lines as a staircase (seen in tmux after `kill` of a
`uvdock add`). Real podman, a real pty as uvdock's controlling terminal.
"""

from __future__ import annotations

import os
import pty
import signal
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import commit_all, engine_name, init_repo, remove_container, start_container
from samples.interrupts import read_terminal

pytestmark = pytest.mark.engine


def _settings(fd: int) -> tuple[int, int]:
    attrs = termios.tcgetattr(fd)
    return attrs[1] & termios.ONLCR, attrs[3] & (termios.ICANON | termios.ECHO)


@pytest.fixture
def long_lived(engine_image: str, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    repo = init_repo(tmp_path / "repo")
    (repo / "README").write_text("x\n")
    commit_all(repo, "initial")
    name = start_container(engine_image, repo, engine_name("terminal-restored"))
    yield repo, name
    remove_container(name)


def test_sigterm_during_a_container_on_a_terminal_restores_the_terminal(
    long_lived: tuple[Path, str],
) -> None:
    repo, name = long_lived
    script = ": > /workspace/.started; exec sleep 60"
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), "--engine", "podman"]
    argv += ["--container", name, "run", "sh", "-c", script]
    pid, master = pty.fork()
    if pid == 0:  # the child: uvdock with the pty as its controlling terminal
        os.execv(sys.executable, argv)
    before = _settings(master)
    deadline = time.monotonic() + 60
    while not (repo / ".started").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    assert _settings(master) != before  # podman made it raw: the scenario is real
    os.kill(pid, signal.SIGTERM)
    output = read_terminal(master, until=b"interrupted")
    _, status = os.waitpid(pid, 0)
    try:
        after = _settings(master)
    finally:
        os.close(master)
    text = output.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 130, text
    assert after == before, text
