"""A cut-short unpack's clean-up, argv-shape (fake srun/scancel/squeue on PATH): the removal
waits until the unpack's job has left squeue, and a removal that fails is said, not dropped.

The real-cluster case is in test_srun_interrupts.py; this pins the order, which a real
cluster shows only under load: slurmctld logged the `enroot remove` job starting 35 ms after
the kill, while the unpack job was still completing, and a second removal failing unseen,
after which the next step reused a half-written container (no python in /opt/venv/bin)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from uvdock.errors import EnvironmentUnusable
from uvdock.run import slurm_containers
from uvdock.run.engines import Placement
from uvdock.ui.output import Output

FAKE = """#!/bin/sh
echo "$(basename "$0") $*" >> "{log}"
case "$(basename "$0") $*" in
  squeue*) n=$(grep -c '^squeue' "{log}"); [ "$n" -le 2 ] && echo 4242; exit 0 ;;
  srun*remove*) echo "enroot: busy" >&2; exit {remove_code} ;;
esac
exit 0
"""


def _fake_slurm(tmp_path: Path, remove_code: int) -> tuple[dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    for tool in ("srun", "scancel", "squeue"):
        script = bin_dir / tool
        script.write_text(FAKE.format(log=log, remove_code=remove_code))
        script.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}, log


def _unpack(tmp_path: Path, env: dict[str, str]) -> None:
    placement = Placement("srun", "srun", "uvdock-0123456789abcdef", "/x/img.sqsh")
    argv = ["srun", "--job-name=uvdock-job1", "--container-image=/x/img.sqsh", "true"]
    git_dir = tmp_path / "git"
    git_dir.mkdir()
    stream = io.StringIO()
    out = Output(stdout=stream, stderr=stream, color="never", env={})
    slurm_containers.unpack_once(
        placement, ["n2"], lambda _nodes: argv, git_dir, lambda _argv: 1, out, env
    )


def test_the_removal_waits_for_the_cut_short_job_to_end(tmp_path: Path) -> None:
    env, log = _fake_slurm(tmp_path, remove_code=0)
    with pytest.raises(EnvironmentUnusable):
        _unpack(tmp_path, env)
    calls = log.read_text().splitlines()
    removal = next(i for i, c in enumerate(calls) if " remove " in c)
    assert "scancel --quiet --name=uvdock-job1" in calls[:removal]
    # squeue listed the job twice, then no more: the removal comes after it was gone
    assert sum(c.startswith("squeue") for c in calls[:removal]) == 3
    assert "--nodelist=n2" in calls[removal]  # on the node whose unpack was cut short alone


def test_a_failed_removal_is_said(tmp_path: Path) -> None:
    env, _log = _fake_slurm(tmp_path, remove_code=1)
    with pytest.raises(EnvironmentUnusable) as raised:
        _unpack(tmp_path, env)
    assert "could not remove pyxis_uvdock-0123456789abcdef on n2" in raised.value.message
    assert "enroot: busy" in raised.value.message
