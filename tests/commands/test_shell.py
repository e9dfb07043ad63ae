"""`uvdock shell` says what it is doing before the wait: no blank screen while a container
starts (19 s on vfs storage)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest


@pytest.mark.engine
def test_shell_says_what_it_starts_before_the_container_runs(
    engine_image: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), "--engine", "podman"]
    argv += ["--image", engine_image, "shell", "--shell", "true"]
    started = time.monotonic()
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        said_after = time.monotonic() - started
        code = proc.wait(timeout=300)
        ended_after = time.monotonic() - started
    assert code == 0, proc.stderr.read() if proc.stderr else ""
    assert first.startswith(f"starting true in a new podman container of {engine_image}")
    assert "removed when the shell exits" in first
    assert said_after < ended_after  # said before the container ran, not after
