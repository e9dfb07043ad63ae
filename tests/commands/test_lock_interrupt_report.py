"""Ctrl-C after uv has written uv.lock (while uvdock shows the lock diff): exit 130, and the
user is told that uv.lock was changed rather than left to believe nothing happened."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import init_repo

SIGNAL_DURING_REPORT = """
import os, signal, sys
from uvdock.lock import lockfile
original = lockfile.diff_locks
def diff_locks(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)  # lands once uv has written uv.lock
    return original(*args, **kwargs)
lockfile.diff_locks = diff_locks
from uvdock.__main__ import entry
sys.argv = ["uvdock", *sys.argv[1:]]
sys.exit(entry())
"""

FAKE_UV = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "uv 0.13.9"; exit 0; fi
printf 'version = 1\\n' > uv.lock
"""


def test_an_interrupt_while_the_lock_diff_is_shown_says_uv_lock_changed(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1.0"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "uv").write_text(FAKE_UV)
    (bin_dir / "uv").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    argv = [sys.executable, "-c", SIGNAL_DURING_REPORT, "--repo", str(repo)]
    done = subprocess.run(
        [*argv, "--engine", "local", "lock"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 130, done.stderr
    assert "uv.lock" in done.stderr and "changed" in done.stderr, done.stderr
    assert (repo / "uv.lock").read_text() == "version = 1\n"
