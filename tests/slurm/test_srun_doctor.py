"""`uvdock doctor` on the srun engine: the setup checks through a real cluster, the unpacked
containers it lists, and `--prune`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from samples.slurm import fresh_sqsh, jobs_named, remove_unpacked, six_repo, unpacked, uvdock

from uvdock.run import slurm

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]


def _checks(
    repo: Path, *args: str | Path, env: dict[str, str] | None = None
) -> dict[str, dict[str, str]]:
    done = uvdock(repo, *args, "--json", "doctor", env=env)
    assert done.code in (0, 1), done.err
    return {c["name"]: c for c in json.loads(done.out)["checks"]}


def test_setup_checks_list_and_prune(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    old, new = fresh_sqsh(sqsh, slurm_tmp), sqsh
    old_name = slurm.PYXIS_PREFIX + slurm.container_name(str(old))
    try:
        assert uvdock(repo, "--image", old, "lock").code == 0  # leaves old's container
        checks = _checks(repo, "--image", new)
        for name in (
            "engine",
            "image or container",
            "uv in the container",
            "venv",
            "uv.lock current",
        ):
            assert checks[name]["status"] == "pass", checks[name]
        listed = checks["srun unpacked containers"]
        assert listed["status"] == "warn" and old_name in listed["detail"]
        assert listed["fix"] == "uvdock doctor --prune"
        pruned = uvdock(repo, "--image", new, "doctor", "--prune")
        assert pruned.code == 0, pruned.err
        assert f"removed {old_name}" in pruned.out
        assert [n for n in unpacked() if n.startswith(slurm.PYXIS_PREFIX + slurm.NAME_PREFIX)] == []
        assert jobs_named() == []
    finally:
        remove_unpacked([old_name])


def test_pyxis_missing_fails_the_engine_check_with_its_fix(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    conf_dir = slurm_tmp / "nopyxis"
    conf_dir.mkdir()
    (conf_dir / "slurm.conf").write_text(Path("/etc/slurm/slurm.conf").read_text())
    (conf_dir / "plugstack.conf").write_text("")
    checks = _checks(repo, "--image", sqsh, env={"SLURM_CONF": str(conf_dir / "slurm.conf")})
    assert checks["engine"]["status"] == "fail"
    assert "pyxis plugin is not loaded" in checks["engine"]["detail"]
    assert "plugstack.conf" in checks["engine"]["fix"]
    assert checks["uv in the container"]["status"] == "skip"
