"""One container per uv command: the `uv --version` probe rides along with uv's own run.

Rootless podman on vfs storage copies the whole image for every container it starts, so a
separate probe doubled the cost of `add` and `lock --check` (issue 30). Real podman; a
PATH wrapper in front of it records each engine command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import init_repo

pytestmark = pytest.mark.engine

PYPROJECT = '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'


@pytest.mark.parametrize("args", [["lock"], ["lock", "--check"]])
def test_uv_and_its_version_share_one_container(
    engine_image: str, tmp_path: Path, args: list[str]
) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(PYPROJECT)
    log, wrappers = tmp_path / "engine.log", tmp_path / "bin"
    wrappers.mkdir()
    podman = shutil.which("podman")
    (wrappers / "podman").write_text(f'#!/bin/sh\necho "$1" >> {log}\nexec {podman} "$@"\n')
    (wrappers / "podman").chmod(0o755)
    env = {**os.environ, "PATH": f"{wrappers}{os.pathsep}{os.environ['PATH']}"}
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), "--engine", "podman"]
    argv += ["--image", engine_image]
    if args == ["lock", "--check"]:  # a lock to check
        subprocess.run([*argv, "lock"], env=env, capture_output=True, check=True)
        log.unlink()
    done = subprocess.run([*argv, *args], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "uv 0.13.9, in a fresh podman container" in done.stderr + done.stdout
    assert "uvdock-version" not in done.stderr + done.stdout
    assert args == ["lock", "--check"] or "Resolved 1 package" in done.stderr  # uv's own words
    assert log.read_text().split().count("run") == 1
