"""`uvdock doctor` on the srun engine: the setup checks through a real cluster, the unpacked
containers it lists, and `--prune`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from samples.slurm import ENROOT_DATA, jobs_left, remove_unpacked, six_repo, unpacked, uvdock

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
    # What an earlier image left: enroot lists (and removes) any rootfs folder in its data
    # path, so a small one stands in for an old image's 430 MB unpack.
    old_name = slurm.PYXIS_PREFIX + slurm.NAME_PREFIX + "0ld0ld0ld0ld0ld0"
    (ENROOT_DATA / "user-0" / old_name / "etc").mkdir(parents=True)
    try:
        checks = _checks(repo, "--image", sqsh)
        for name in ("engine", "image or container", "uv in the container", "venv"):
            assert checks[name]["status"] == "pass", checks[name]
        assert checks["uv.lock current"]["status"] == "fail"  # no uv.lock yet: uv said so
        listed = checks["srun unpacked containers"]
        assert listed["status"] == "warn" and old_name in listed["detail"]
        current = slurm.PYXIS_PREFIX + slurm.container_name(str(sqsh), repo, 0)
        assert f"{current} (current)" in listed["detail"]
        assert listed["fix"] == "uvdock doctor --prune"
        pruned = uvdock(repo, "--image", sqsh, "doctor", "--prune")
        assert pruned.code == 0, pruned.err
        assert f"removed {old_name}" in pruned.out and f"removed {current}" in pruned.out
        assert [n for n in unpacked() if n.startswith(slurm.PYXIS_PREFIX + slurm.NAME_PREFIX)] == []
        assert jobs_left() == []
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
