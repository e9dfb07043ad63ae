"""Ctrl-C and a hard kill while `lock resolve` relocks after merging pyproject.toml.

The merged pyproject.toml is already written and staged when the (fake, slow) uv runs;
the interrupt must put pyproject.toml, uv.lock and every index stage of both back.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from samples.pyproject_conflicts import BASE, add_to, full_snapshot, make_pyproject_conflict
from samples.slow_uv import start_resolve

from uvdock.files import state_store


def conflicted(tmp_path: Path, wheelhouse: Path, operation: str) -> Path:
    return make_pyproject_conflict(
        tmp_path,
        wheelhouse,
        operation,
        main=add_to(BASE, "dependencies", "alpha"),
        feature=add_to(BASE, "dependencies", "beta"),
    ).repo


def test_ctrl_c_after_the_merge_restores_both_files(wheelhouse: Path, tmp_path: Path) -> None:
    repo = conflicted(tmp_path, wheelhouse, "rebase")
    before = full_snapshot(repo)
    child, _ = start_resolve(repo, tmp_path)
    # The merge happened: pyproject.toml is staged, no longer unmerged, when uv runs.
    staged = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-s", "pyproject.toml"], capture_output=True, text=True
    ).stdout
    assert staged.count("\n") == 1 and " 0\t" in staged
    assert b"<<<<<<<" not in (repo / "pyproject.toml").read_bytes()
    os.killpg(child.pid, signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err.decode()
    assert "uv.lock, pyproject.toml and their index entries are back" in err.decode()
    assert full_snapshot(repo) == before
    assert not state_store.state_dir(repo).exists()


def test_kill_then_abort_restores_both_files(wheelhouse: Path, tmp_path: Path) -> None:
    repo = conflicted(tmp_path, wheelhouse, "merge")
    before = full_snapshot(repo)
    child, _ = start_resolve(repo, tmp_path)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=60)  # the local uv leads its own group: it still runs, holding the pipes
    assert full_snapshot(repo) != before
    abort = [sys.executable, "-m", "uvdock", "--repo", str(repo), "lock", "resolve", "--abort"]
    aborted = subprocess.run(abort, capture_output=True, text=True, check=False)
    assert aborted.returncode == 0, aborted.stderr
    child.communicate(timeout=30)  # --abort stopped that uv: the pipes are closed
    assert "uv.lock and pyproject.toml" in aborted.stdout
    assert full_snapshot(repo) == before
