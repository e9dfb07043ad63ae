"""`lock resolve` merges pyproject.toml and relocks in a real container (podman, test image)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RunCli, git
from samples.interrupts import read_terminal
from samples.lock_conflicts import uv_lock
from samples.pyproject_conflicts import BASE, add_to, make_pyproject_conflict

from uvdock.files import state_store
from uvdock.lock import lockfile

pytestmark = pytest.mark.engine


def test_merges_pyproject_and_relocks_in_container(
    engine_image: str, wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        "rebase",
        main=add_to(BASE, "group", "alpha"),
        feature=add_to(BASE, "group", "beta"),
    )
    result = run_cli(
        "--repo",
        conflict.repo,
        "--engine",
        "podman",
        "--image",
        engine_image,
        "lock",
        "resolve",
        "--onto",
        "main",
        "--no-fetch",
    )
    assert result.code == 0, result.err
    assert git(conflict.repo, "ls-files", "-u") == ""
    packages = lockfile.read_packages(conflict.lock.read_bytes())
    assert {"alpha", "beta", "delta"} <= packages.keys()
    assert uv_lock(conflict.repo, "--check").returncode == 0
    text = (conflict.repo / "pyproject.toml").read_text()
    assert '    "alpha",\n' in text and '    "beta",\n' in text
    assert not state_store.state_dir(conflict.repo).exists()
    git(conflict.repo, "-c", "core.editor=true", "rebase", "--continue")


SLOW_UV = """#!/bin/sh
: > /workspace/.uv-started
exec sleep 120
"""


def test_ctrl_c_on_a_terminal_during_the_container_relock_is_an_interrupt(
    engine_image: str, wheelhouse: Path, tmp_path: Path
) -> None:
    # On a terminal the container gets a tty (-t): podman puts the terminal in raw mode,
    # so Ctrl-C reaches uv in the container, not uvdock. uv's exit 130 is the user's
    # interrupt, not a failed relock: exit 130 and everything back as it was.
    import os
    import pty
    import sys
    import time

    from samples.pyproject_conflicts import full_snapshot

    repo = make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        "merge",
        main=add_to(BASE, "dependencies", "alpha"),
        feature=add_to(BASE, "dependencies", "beta"),
    ).repo
    fakebin = repo / "fakebin"
    fakebin.mkdir()
    (fakebin / "uv").write_text(SLOW_UV)
    (fakebin / "uv").chmod(0o755)
    # The user's own setting: a repository's engine-args need `uvdock trust`.
    env = {
        **os.environ,
        "UVDOCK_ENGINE_ARGS": "-e PATH=/workspace/fakebin:/usr/local/bin:/usr/bin:/bin",
    }
    before = full_snapshot(repo)
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), "--engine", "podman"]
    argv += ["--image", engine_image, "lock", "resolve", "--onto", "main", "--no-fetch"]
    pid, master = pty.fork()
    if pid == 0:  # the child: uvdock with the pty as its controlling terminal
        os.execve(sys.executable, argv, env)
    deadline = time.monotonic() + 60
    while not (repo / ".uv-started").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    os.write(master, b"\x03")
    output = read_terminal(master)
    _, status = os.waitpid(pid, 0)
    os.close(master)
    text = output.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 130, text
    assert "interrupted" in text
    (repo / ".uv-started").unlink()
    assert full_snapshot(repo) == before
