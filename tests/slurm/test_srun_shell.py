"""`uvdock shell --slurm` in a real terminal (tmux): a pty through `srun --pty` into the
reusable unpacked container, with the repository mounted and uv's cache set."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from samples.slurm import jobs_left, jobs_named, six_repo, uvdock_argv, uvdock_env

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]


def _wait(condition: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"no {what} within {seconds} s"
        time.sleep(0.2)


def test_shell_slurm_in_tmux(sqsh: Path, slurm_tmp: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    repo = six_repo(slurm_tmp)
    session = f"uvdock-shell-{os.getpid()}"
    done = slurm_tmp / "exit-code"
    args: list[str | Path] = [
        "--repo",
        repo,
        "--image",
        sqsh,
        "shell",
        "--slurm",
        "--gpus-per-node",
        "0",
        "--shell",
        "sh",
    ]
    script = f"{shlex.join(uvdock_argv(args))}; echo $? > {shlex.quote(str(done))}"
    env = uvdock_env(repo.parent / "home")
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "150", "-y", "40", script],
        env=env,
        check=True,
    )
    try:
        _wait(lambda: jobs_named() != [], 120, "srun job")
        time.sleep(1)
        typed = 'tty > seen; echo "$UV_CACHE_DIR" >> seen; pwd >> seen; exit 3'
        for _ in range(60):  # the shell's prompt comes once pyxis started the container
            subprocess.run(["tmux", "send-keys", "-t", session, typed, "Enter"], check=False)
            if (repo / "seen").exists() or done.exists():
                break
            time.sleep(2)
        _wait(done.exists, 60, "end of the shell")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True, check=False)
    seen = (repo / "seen").read_text().splitlines()
    assert seen[0].startswith("/dev/pts/"), seen  # a real pty in the container
    assert seen[1:] == ["/root/.cache/uv", "/workspace"]
    assert done.read_text().strip() == "3"  # the shell's own exit code
    assert jobs_left() == []
