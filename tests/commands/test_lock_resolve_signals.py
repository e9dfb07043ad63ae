"""Ctrl-C and a hard kill while `lock resolve` relocks: nothing is lost.

uvdock runs as a real subprocess in its own session (as in a terminal). A fake `uv` on PATH
(--engine local) scribbles over uv.lock and then sleeps, so the signal surely lands while
"uv" runs and after uv.lock was changed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from conftest import git
from samples.lock_conflicts import make_conflict, snapshot
from samples.slow_uv import start_resolve

from uvdock.lock import resolve_state


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
    assert not resolve_state.state_dir(conflict.repo / ".git").exists()


def test_kill_then_abort_restores_exact_state(wheelhouse: Path, tmp_path: Path) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    before = snapshot(conflict.repo)
    child, _ = start_resolve(conflict.repo, tmp_path)
    os.killpg(child.pid, signal.SIGKILL)  # no handler can run: only the saved state remains
    child.communicate(timeout=60)
    assert conflict.lock.read_bytes() != before.lock
    assert resolve_state.state_dir(conflict.repo / ".git").is_dir()
    abort = [sys.executable, "-m", "uvdock", "--repo", str(conflict.repo), "lock", "resolve"]
    aborted = subprocess.run([*abort, "--abort"], capture_output=True, text=True, check=False)
    assert aborted.returncode == 0, aborted.stderr
    assert snapshot(conflict.repo) == before
    assert git(conflict.repo, "ls-files", "-u", "uv.lock") == before.unmerged
    assert not resolve_state.state_dir(conflict.repo / ".git").exists()
