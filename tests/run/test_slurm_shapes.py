"""The srun shapes of issue 31, argv only (the real two-node cluster is in
tests/slurm/test_srun_nodes.py): writes stay one task whatever engine-args say, sync is
one task per node, a user's own container name replaces uvdock's."""

from __future__ import annotations

from pathlib import Path

from uvdock.run import engines, slurm, slurm_steps

MOUNTS = engines.Mounts(Path("/src/repo"), "/workspace", "/home/u/.cache/uv", "/root/.cache/uv")


def test_a_write_stays_one_task_after_engine_args() -> None:
    placement = engines.Placement("srun", "srun", "uvdock-abc", "/i.sqsh", ("--nodes=2",))
    shape = slurm_steps.shape_args(slurm_steps.ONCE, ["n1"])
    argv = engines.srun_argv(placement, ["uv", "lock"], mounts=MOUNTS, pty=False, shape=shape)
    # srun takes the last of a repeated option: uvdock's shape comes after engine-args
    assert argv.index("--nodes=1") > argv.index("--nodes=2")
    assert "--ntasks=1" in argv and "--nodelist=n1" in argv
    assert "--container-writable" in argv  # uvdock's own container: sync installs into it


def test_sync_is_one_task_per_node_with_a_bound_on_stragglers() -> None:
    assert slurm_steps.shape_args(slurm_steps.EVERY_NODE, ["n1", "n2"]) == [
        "--nodes=2",
        "--ntasks=2",
        "--ntasks-per-node=1",
        "--nodelist=n1,n2",
        f"--wait={slurm_steps.STRAGGLER_SECONDS}",
    ]
    assert slurm_steps.shape_args(slurm_steps.FOLLOW, []) == []  # run: as srun itself would


def test_a_users_own_container_name_replaces_uvdocks() -> None:
    extra = ("--container-name", "mine")
    assert slurm.option_value(extra, "--container-name", "--container-name") == "mine"
    placement = engines.Placement("srun", "srun", "", "/i.sqsh", extra)
    argv = engines.srun_argv(placement, ["true"], mounts=MOUNTS, pty=False)
    assert [a for a in argv if a.startswith("--container-name")] == ["--container-name"]
    assert "--container-writable" in argv
    readonly = engines.Placement("srun", "srun", "", "/i.sqsh", (*extra, "--container-readonly"))
    assert "--container-writable" not in engines.srun_argv(
        readonly, ["true"], mounts=MOUNTS, pty=False
    )


def test_enroot_steps_drop_pyxis_options() -> None:
    extra = ["-p", "batch", "--container-name", "mine", "--container-writable", "-A", "acct"]
    assert slurm_steps.without_pyxis(extra) == ["-p", "batch", "-A", "acct"]
