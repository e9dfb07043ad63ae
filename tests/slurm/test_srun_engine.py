"""The srun engine for real: Slurm 22.05 + pyxis 0.24 + enroot 4.1.2, the test image as .sqsh,
a tiny project locking `six` through the package index; as root and as a cluster user."""

from __future__ import annotations

from pathlib import Path

import pytest
from samples.slurm import (
    User,
    conflict_on_srun,
    jobs_left,
    six_repo,
    unpacked,
    uvdock,
)

from uvdock.run import slurm

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]


def test_lock_then_check_reuses_one_unpacked_container(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    name = slurm.container_name(str(sqsh), repo, 0)
    first = uvdock(repo, "--image", sqsh, "lock")
    assert first.code == 0, first.err
    assert 'name = "six"' in (repo / "uv.lock").read_text()
    assert f"for reuse as {name}" in first.out  # unpacked in a step of its own, once
    check = uvdock(repo, "--image", sqsh, "lock", "--check")
    assert check.code == 0, check.err
    assert "unpacking" not in check.out and "is up to date" in check.out
    assert slurm.PYXIS_PREFIX + name in unpacked()
    assert not [n for n in unpacked() if n[len(slurm.PYXIS_PREFIX)].isdigit()]  # no temporary one
    assert jobs_left() == []


def test_a_cluster_user_locks_adds_removes_and_runs(
    sqsh: Path, cluster_user: User, slurm_tmp: Path
) -> None:
    """Not root: uv's cache must be the mount (its HOME is on the read-only root filesystem),
    and what lands in the repository belongs to the user."""
    repo = six_repo(slurm_tmp, cluster_user)
    locked = uvdock(repo, "--image", sqsh, "lock", user=cluster_user)
    assert locked.code == 0, locked.err
    assert "Read-only file system" not in locked.err
    assert (repo / "uv.lock").stat().st_uid == cluster_user.uid
    added = uvdock(repo, "--image", sqsh, "add", "packaging", user=cluster_user)
    assert added.code == 0, added.err
    assert "packaging" in (repo / "pyproject.toml").read_text()
    removed = uvdock(repo, "--image", sqsh, "remove", "packaging", user=cluster_user)
    assert removed.code == 0, removed.err
    assert "packaging" not in (repo / "pyproject.toml").read_text()
    for written in ("uv.lock", "pyproject.toml"):
        assert (repo / written).stat().st_uid == cluster_user.uid
    ran = uvdock(repo, "--image", sqsh, "run", "--", "id", "-u", user=cluster_user)
    assert ran.code == 0, ran.err
    assert ran.out.strip().splitlines()[-1] == str(cluster_user.uid)
    python = uvdock(repo, "--image", sqsh, "run", "--", "python", "-V", user=cluster_user)
    assert python.code == 0, python.err  # the image's venv is first on PATH, as in its ENV
    cache = slurm_tmp / "home" / ".cache" / "uv"
    assert any(cache.iterdir())  # uv used the user's cache on the host, through the mount
    assert unpacked(cluster_user.uid)  # the user's own reusable container


def test_without_image_the_enroot_output_is_used(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    (repo / "megatron-lm.sqsh").symlink_to(sqsh)  # the shared image's unpacked container
    done = uvdock(repo, "lock", "--check")
    assert "unpacking" in done.out and slurm.container_name(str(sqsh), repo, 0) in done.out
    assert f"image {repo / 'megatron-lm.sqsh'}" in done.out
    assert done.code == 1  # no uv.lock yet: the check ran in the container and said so


def test_a_bare_local_tag_is_refused_with_the_import_hint(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    for args in ([], ["--image", "megatron-lm:local"], ["--image", "localhost/ci:dev"]):
        done = uvdock(repo, *args, "lock")
        assert done.code == 3, done.err
        assert "local image tag" in done.err and "uvdock image enroot" in done.err
    assert not (repo / "uv.lock").exists()
    assert jobs_left() == []


def test_run_passes_the_exit_code_and_the_step_environment(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    done = uvdock(repo, "--image", sqsh, "run", "--", "sh", "-c", 'echo "$UV_CACHE_DIR"; exit 7')
    assert done.code == 7, done.err
    assert done.out.strip().splitlines()[-1] == "/root/.cache/uv"


def test_lock_resolve_relocks_through_srun(sqsh: Path, slurm_tmp: Path, wheelhouse: Path) -> None:
    conflict, _before = conflict_on_srun(slurm_tmp, wheelhouse, sqsh)
    done = uvdock(conflict.repo, "--image", sqsh, "lock", "resolve", "--onto", "main", "--no-fetch")
    assert done.code == 0, done.err
    text = conflict.lock.read_text()
    assert "<<<<<<<" not in text
    assert f'name = "{conflict.main_pkg}"' in text and f'name = "{conflict.feature_pkg}"' in text
    assert jobs_left() == []
