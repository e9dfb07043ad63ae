"""A setup srun cannot use: exit 3, one line naming the cause and the fix, nothing changed,
no job started. Slurm down and pyxis missing are real Slurm clients reading a copy of the
cluster's configuration (SLURM_CONF), so the running cluster is never touched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from samples.slurm import git, jobs_left, six_repo, uvdock

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]

SLURM_CONF = Path("/etc/slurm/slurm.conf")


def _conf_copy(folder: Path, *, extra: str = "", plugstack: str | None = None) -> Path:
    folder.mkdir()
    conf = folder / "slurm.conf"
    conf.write_text(SLURM_CONF.read_text() + extra)
    stack = SLURM_CONF.parent / "plugstack.conf"
    if plugstack is None:
        shutil.copyfile(stack, folder / "plugstack.conf")
    else:
        (folder / "plugstack.conf").write_text(plugstack)
    return conf


def _refused(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = uvdock(repo, *args, "lock", env=env)
    assert done.code == 3, (done.out, done.err)
    lines = [line for line in done.err.splitlines() if line.strip()]
    assert lines[0].startswith("error: ") and len(lines) <= 2, done.err  # error + hint
    assert git(repo, "status", "--porcelain", "--ignored") == ""
    assert jobs_left() == []
    return done.err


def test_a_missing_sqsh(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    err = _refused(repo, "--image", str(slurm_tmp / "nothing.sqsh"))
    assert "no such .sqsh file" in err and "uvdock image enroot" in err


def test_a_file_that_is_not_squashfs(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    fake = slurm_tmp / "fake.sqsh"
    fake.write_bytes(b"\x1f\x8b not a squashfs image" * 10)
    err = _refused(repo, "--image", str(fake))
    assert "is not a squashfs image" in err and "uvdock image enroot" in err


def test_a_partition_that_does_not_exist(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    err = _refused(repo, "--image", str(sqsh), env={"UVDOCK_ENGINE_ARGS": "--partition=nosuchpart"})
    assert "partition 'nosuchpart' does not exist" in err and "sinfo" in err


def test_slurmctld_not_answering(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    # Nothing listens on the controller port this copy names.
    conf = _conf_copy(slurm_tmp / "down", extra="SlurmctldPort=9\n")
    err = _refused(repo, "--image", str(sqsh), env={"SLURM_CONF": str(conf)})
    assert "controller is not answering" in err and "start slurmctld" in err


def test_pyxis_not_loaded(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    conf = _conf_copy(slurm_tmp / "nopyxis", plugstack="")
    err = _refused(repo, "--image", str(sqsh), env={"SLURM_CONF": str(conf)})
    assert "pyxis plugin is not loaded" in err and "plugstack.conf" in err
