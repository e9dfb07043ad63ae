"""A uvdock `lock resolve` started as a real process with a slow fake uv, for signal tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

FAKE_UV = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "uv 0.13.9"; exit 0; fi
printf 'half written by a slow uv\\n' > uv.lock
: > "$FAKE_UV_STARTED"
exec sleep 120
"""


def start_resolve(repo: Path, tmp_path: Path, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    fake = bin_dir / "uv"
    fake.write_text(FAKE_UV)
    fake.chmod(0o755)
    started = tmp_path / "uv-started"
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["FAKE_UV_STARTED"] = str(started)
    argv = [
        sys.executable,
        "-m",
        "uvdock",
        "--repo",
        str(repo),
        "--engine",
        "local",
        "lock",
        "resolve",
        "--onto",
        "main",
        "--no-fetch",
        *args,
    ]
    child = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not started.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            _out, err = child.communicate()
            pytest.fail(f"fake uv never started (exit {child.returncode}): {err.decode()}")
        time.sleep(0.05)
    return child, started
