"""Ctrl-C and a hard kill while `lock resolve` relocks: nothing is lost.

uvdock runs as a real subprocess in its own session (as in a terminal). A fake `uv` on PATH
(--engine local) scribbles over uv.lock and then sleeps, so the signal surely lands while
"uv" runs and after uv.lock was changed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import engine_name, git, remove_container
from samples.interrupts import CONTAINER_FAKE_UV, start_resolve_in_container
from samples.lock_conflicts import make_conflict, snapshot
from samples.slow_uv import start_resolve

from uvdock.files import state_store


def test_ctrl_c_during_relock_restores_exact_state(wheelhouse: Path, tmp_path: Path) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "rebase")
    before = snapshot(conflict.repo)
    child, _ = start_resolve(conflict.repo, tmp_path)
    assert conflict.lock.read_bytes() == b"half written by a slow uv\n"
    os.killpg(child.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole group
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err.decode()
    assert "back as they were" in err.decode()
    assert snapshot(conflict.repo) == before
    assert not state_store.state_dir(conflict.repo / ".git").exists()


def test_kill_then_abort_restores_exact_state(wheelhouse: Path, tmp_path: Path) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    before = snapshot(conflict.repo)
    child, _ = start_resolve(conflict.repo, tmp_path)
    os.killpg(child.pid, signal.SIGKILL)  # no handler can run: only the saved state remains
    child.wait(timeout=60)  # the local uv leads its own group: it still runs, holding the pipes
    assert conflict.lock.read_bytes() != before.lock
    assert state_store.state_dir(conflict.repo / ".git").is_dir()
    abort = [sys.executable, "-m", "uvdock", "--repo", str(conflict.repo), "lock", "resolve"]
    aborted = subprocess.run([*abort, "--abort"], capture_output=True, text=True, check=False)
    assert aborted.returncode == 0, aborted.stderr
    child.communicate(timeout=30)  # --abort stopped that uv: the pipes are closed
    assert snapshot(conflict.repo) == before
    assert git(conflict.repo, "ls-files", "-u", "uv.lock") == before.unmerged
    assert not state_store.state_dir(conflict.repo / ".git").exists()


def _abort(repo: Path, *options: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), *options, "lock", "resolve"]
    return subprocess.run([*argv, "--abort"], capture_output=True, text=True, check=False)


def test_a_second_ctrl_c_during_the_restore_does_not_cut_it(
    wheelhouse: Path, tmp_path: Path
) -> None:
    for round_ in range(3):
        conflict = make_conflict(tmp_path / str(round_), wheelhouse, "rebase")
        before = snapshot(conflict.repo)
        child, _ = start_resolve(conflict.repo, tmp_path / str(round_))
        os.killpg(child.pid, signal.SIGINT)
        time.sleep(0.01 * round_)
        os.killpg(child.pid, signal.SIGINT)  # impatient: twice
        _, err = child.communicate(timeout=60)
        assert child.returncode == 130, err.decode()
        assert "could not restore" not in err.decode()
        assert snapshot(conflict.repo) == before


@pytest.mark.engine
def test_sigkill_in_run_placement_then_abort_stops_the_container(
    engine_image: str, wheelhouse: Path, tmp_path: Path
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    before = snapshot(conflict.repo)
    options = ["--engine", "podman", "--image", engine_image]
    child, _ = start_resolve_in_container(conflict.repo, tmp_path, options)
    state = json.loads((state_store.state_dir(conflict.repo / ".git") / "state.json").read_text())
    name = state["started"]["container"]
    assert state["started"]["mode"] == "run" and name in _containers()
    os.killpg(child.pid, signal.SIGKILL)
    child.communicate(timeout=60)
    assert name in _containers()  # a hard kill leaves it; --abort must stop it first
    aborted = _abort(conflict.repo, *options)
    assert aborted.returncode == 0, aborted.stderr
    assert name not in _containers()
    assert snapshot(conflict.repo) == before


@pytest.mark.engine
def test_a_container_stopped_mid_relock_is_exit_3(
    engine_image: str, wheelhouse: Path, tmp_path: Path
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "rebase")
    before = snapshot(conflict.repo)
    name = engine_name("test-stopped")
    fake = tmp_path / "container-uv"
    fake.write_text(CONTAINER_FAKE_UV)
    fake.chmod(0o755)
    (tmp_path / "signal").mkdir()
    mounts = ["-v", f"{conflict.repo}:/workspace", "-v", f"{fake}:/usr/local/bin/uv:ro"]
    mounts += ["-v", f"{tmp_path / 'signal'}:/uvdock-signal"]
    subprocess.run(
        ["podman", "run", "-d", "--name", name, *mounts, engine_image, "sleep", "infinity"],
        check=True,
        capture_output=True,
    )
    try:
        child, _ = start_resolve_in_container(
            conflict.repo, tmp_path, ["--engine", "podman", "--container", name]
        )
        subprocess.run(["podman", "kill", name], check=True, capture_output=True)
        _, err = child.communicate(timeout=90)
        assert child.returncode == 3, err.decode()
        assert "container stopped" in err.decode() and "pyproject" not in err.decode()
        assert snapshot(conflict.repo) == before
    finally:
        remove_container(name)


def _containers() -> list[str]:
    listing = subprocess.run(
        ["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=True
    )
    return listing.stdout.split()


SIGNAL_DURING_REPORT = """
import os, signal, sys
from uvdock.lock import lockfile
original = lockfile.diff_locks
def diff_locks(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)  # lands once uv.lock is resolved and staged
    return original(*args, **kwargs)
lockfile.diff_locks = diff_locks
from uvdock.__main__ import entry
sys.argv = ["uvdock", *sys.argv[1:]]
sys.exit(entry())
"""


def test_an_interrupt_after_the_lock_is_staged_says_it_is_staged(
    wheelhouse: Path, tmp_path: Path
) -> None:
    # The work is done when the signal lands: exit 130, but the user is told that uv.lock
    # is resolved and staged rather than left to believe nothing changed.
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    (bin_dir / "uv").write_text('#!/bin/sh\n[ "$1" = "--version" ] && echo "uv 0.13.9"\nexit 0\n')
    (bin_dir / "uv").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    argv = [sys.executable, "-c", SIGNAL_DURING_REPORT, "--repo", str(conflict.repo)]
    argv += ["--engine", "local", "lock", "resolve", "--onto", "main", "--no-fetch"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 130, done.stderr
    assert "resolved" in done.stderr and "staged" in done.stderr, done.stderr
    assert git(conflict.repo, "ls-files", "-u", "uv.lock") == ""
    assert not state_store.state_dir(conflict.repo / ".git").exists()
