"""Failures named where they happen, and the terminal left to its user. Real podman.

A container the engine cannot start is the engine's failure (exit 3, its own words, the fix
for the known cause), never "uv was not found"; a command missing in the container is exit
127 naming it, not the init's "failed to exec pid1"; uv runs get no terminal (`-t`); and an
engine client holding the terminal dies with a killed uvdock.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import init_repo
from samples.interrupts import read_terminal, uvdock_containers

pytestmark = pytest.mark.engine

PYPROJECT = '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'


def _uvdock(repo: Path, image: str, *args: str) -> list[str]:
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), "--engine", "podman"]
    return [*argv, "--image", image, *args]


def _run(argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env={**os.environ, **env}, capture_output=True, text=True, check=False, timeout=120
    )


@pytest.mark.parametrize("args", [["run", "--", "true"], ["lock", "--check"], ["lock"]])
def test_a_container_that_cannot_start_is_the_engines_failure(
    engine_image: str, tmp_path: Path, args: list[str]
) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(PYPROJECT)
    done = _run(
        _uvdock(repo, engine_image, *args), UVDOCK_ENGINE_ARGS="--network=uvdock-no-such-net"
    )
    assert done.returncode == 3, done.stderr
    assert "could not start a container" in done.stderr and "network not found" in done.stderr
    assert "podman network create" in done.stderr  # the fix for this cause
    assert "uv was not found" not in done.stderr and "wrong image" not in done.stderr


def test_the_rootless_network_failure_names_the_user_config_fix(tmp_path: Path) -> None:
    # The engine's own words, as rootless podman prints them where /dev/net/tun is closed
    # (issue 30); the hint is read from them alone.
    from uvdock.run import engines

    placement = engines.Placement("run", "podman", image="img:1")
    said = 'Error: slirp4netns failed: "... open(\\"/dev/net/tun\\"): Permission denied"\n'
    failure = engines.start_failure(placement, said, tmp_path / "config.toml", "--")
    assert failure.exit_code == 3
    assert 'engine-args = ["--network=host"]' in (failure.hint or "")
    assert str(tmp_path / "config.toml") in (failure.hint or "")


def test_a_missing_command_is_127_and_named(engine_image: str, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    done = _run(_uvdock(repo, engine_image, "run", "--", "no-such-command-uvdock", "-x"))
    assert done.returncode == 127, done.stderr
    assert "no-such-command-uvdock: not found in the container" in done.stderr
    assert "catatonit" not in done.stderr and "pid1" not in done.stderr


def test_uv_missing_from_a_container_that_ran_is_the_image(
    engine_image: str, tmp_path: Path
) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(PYPROJECT)
    done = _run(_uvdock(repo, engine_image, "lock"), UVDOCK_ENGINE_ARGS="-e PATH=/nowhere")
    assert done.returncode == 3, done.stderr
    assert "uv was not found in the container" in done.stderr
    assert "could not start" not in done.stderr


def _on_a_terminal(argv: list[str]) -> tuple[int, int]:
    pid, master = pty.fork()
    if pid == 0:  # uvdock with the pty as its controlling terminal, in the foreground
        os.execv(argv[0], argv)
    return pid, master


def test_uv_gets_no_terminal_but_run_does(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(PYPROJECT)
    shown = {}
    for command in (["lock"], ["run", "--", "bash"]):
        pid, master = _on_a_terminal(_uvdock(repo, "img:1", "--dry-run", *command))
        shown[command[0]] = read_terminal(master).decode(errors="replace")
        os.waitpid(pid, 0)
        os.close(master)
    assert " -t " not in shown["lock"] and " uv lock" in shown["lock"]
    assert " -i -t " in shown["run"]


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_uvdock_leaves_no_engine_client_on_the_terminal(
    engine_image: str, tmp_path: Path
) -> None:
    # As from a user's shell: uvdock is a job on the terminal, not its session leader, so
    # the kernel's hang-up when uvdock dies reaches nobody; its `podman run -i -t` used to
    # run on, holding the terminal raw and swallowing what the user typed next.
    repo = init_repo(tmp_path / "repo")
    tag = f"orphan-{time.monotonic_ns()}"
    script = ': > .started-"$0"; exec sleep 60'
    uvdock = _uvdock(repo, engine_image, "run", "--", "sh", "-c", script, tag)
    shell, master = _on_a_terminal(["/bin/sh", "-c", '"$@"; exec sleep 60', "sh", *uvdock])
    try:
        deadline = time.monotonic() + 60
        while not (repo / f".started-{tag}").exists():
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.05)
        (pid,) = _children(shell)
        clients = _children(pid)
        assert clients, "uvdock started no engine client"
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while any(_alive(client) for client in clients) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [client for client in clients if _alive(client)]
        for client in left:
            os.kill(client, signal.SIGKILL)
    finally:
        os.kill(shell, signal.SIGKILL)
        os.waitpid(shell, 0)
        os.close(master)
    for name in uvdock_containers(tag):  # it ends with its command (podman run --rm)
        subprocess.run(["podman", "rm", "-f", "-t", "0", name], capture_output=True, check=False)
    assert left == [], "the engine client outlived uvdock"


def test_a_command_that_exits_125_by_itself_is_its_own_exit(
    engine_image: str, tmp_path: Path
) -> None:
    repo = init_repo(tmp_path / "repo")
    done = _run(_uvdock(repo, engine_image, "run", "--", "sh", "-c", "exit 125"))
    assert done.returncode == 125, done.stderr
    assert "could not start" not in done.stderr


def _containers_mounting(repo: Path) -> list[str]:
    listed = ["podman", "ps", "-a", "-q", "--no-trunc", f"--filter=volume={repo}"]
    return subprocess.run(listed, capture_output=True, text=True, check=False).stdout.split()


def test_a_killed_uvdock_leaves_no_shell_container(engine_image: str, tmp_path: Path) -> None:
    # `uvdock shell` on a terminal, uvdock a job of the user's shell; kill -9 of uvdock took
    # its `podman run -t` client with it, but conmon holds the container's pty, so the
    # container's bash waited for input forever.
    repo = init_repo(tmp_path / "repo")
    uvdock = _uvdock(repo, engine_image, "shell")
    shell, master = _on_a_terminal(["/bin/sh", "-c", '"$@"; exec sleep 60', "sh", *uvdock])
    try:
        os.write(master, b"echo $HOSTNAME > /workspace/.up\n")  # read once bash is up
        deadline = time.monotonic() + 60
        while not (repo / ".up").exists():
            assert time.monotonic() < deadline, "the shell never started"
            time.sleep(0.05)
        assert _containers_mounting(repo), "the shell runs in no container of this repository"
        (pid,) = _children(shell)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 15
        while _containers_mounting(repo) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _containers_mounting(repo)
    finally:
        os.kill(shell, signal.SIGKILL)
        os.waitpid(shell, 0)
        os.close(master)
        for name in _containers_mounting(repo):
            subprocess.run(
                ["podman", "rm", "-f", "-t", "0", name], capture_output=True, check=False
            )
    assert left == [], "the shell's container outlived uvdock"
