"""`uvdock lock resolve` relocking in a real container (podman, the uv test image)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RunCli, git
from samples.lock_conflicts import make_conflict, snapshot, status_without_lock, uv_lock

from uvdock.files import state_store
from uvdock.lock import lockfile

pytestmark = pytest.mark.engine


@pytest.mark.parametrize("operation", ["merge", "rebase"])
def test_resolves_in_container(
    operation: str,
    engine_image: str,
    wheelhouse: Path,
    tmp_path: Path,
    run_cli: RunCli,
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, operation)
    others = status_without_lock(conflict.repo)
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
    data = conflict.lock.read_bytes()
    assert not lockfile.has_conflict_markers(data)
    assert git(conflict.repo, "ls-files", "-u", "uv.lock") == ""
    packages = lockfile.read_packages(data)
    assert {"alpha", "beta", "delta"} <= packages.keys()
    assert uv_lock(conflict.repo, "--check").returncode == 0
    assert status_without_lock(conflict.repo) == others
    assert not state_store.state_dir(conflict.repo / ".git").exists()


def test_unsatisfiable_in_container_restores(
    engine_image: str, wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(
        tmp_path, wheelhouse, "merge", main_pkg="lowpin", feature_pkg="highpin"
    )
    before = snapshot(conflict.repo)
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
    assert result.code == 1
    assert snapshot(conflict.repo) == before


def test_missing_image_is_exit_3_and_changes_nothing(
    engine_image: str, wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    before = snapshot(conflict.repo)
    result = run_cli(
        "--repo",
        conflict.repo,
        "--engine",
        "podman",
        "--image",
        "localhost/uvdock-no-such:image",
        "lock",
        "resolve",
        "--onto",
        "main",
        "--no-fetch",
    )
    assert result.code == 3
    assert snapshot(conflict.repo) == before
