"""`lock resolve` merges pyproject.toml and relocks in a real container (podman, test image)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RunCli, git
from samples.lock_conflicts import uv_lock
from samples.pyproject_conflicts import BASE, add_to, make_pyproject_conflict

from uvdock.lock import lockfile, resolve_state

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
    assert not resolve_state.state_dir(conflict.repo).exists()
    git(conflict.repo, "-c", "core.editor=true", "rebase", "--continue")
