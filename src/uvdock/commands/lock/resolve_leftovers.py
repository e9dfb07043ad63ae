"""What a relock leaves running when uvdock is interrupted or killed: recorded in the saved
state before it starts, and stopped by `lock resolve --abort` (or the next run) before any
file is restored, so that a late uv can never write over the restored files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import EnvironmentUnusable
from uvdock.files import state_store
from uvdock.lock import resolve_state

if TYPE_CHECKING:
    from uvdock.context import Context
    from uvdock.run.ci_container import CIContainer


def started(shim: CIContainer) -> dict[str, str]:
    """What an interrupted or killed relock may leave running, for `--abort`."""
    placement = shim.placement
    if placement.mode == "run":
        return {"mode": "run", "engine": placement.engine, "container": shim.container_name}
    if placement.mode == "exec":
        return {
            "mode": "exec",
            "engine": placement.engine,
            "container": placement.container,
            "run_id": shim.run_id,
        }
    if placement.mode == "srun":  # the step runs on under Slurm when uvdock is killed
        return {"mode": "srun", "job": shim.container_name}
    return {"mode": placement.mode}


def note_group(git_dir: Path, pid: int) -> None:
    """A local uv was started leading its own process group: record it for `--abort`."""
    from uvdock.run import stop

    state_store.note_started(git_dir, stop.group_identity(pid))


def stop_started(ctx: Context, state: resolve_state.SavedState) -> None:
    """`--abort` after a kill: stop the relock the killed run left behind, before restoring."""
    from uvdock.run import stop

    started = dict(state.started)
    if started.get("mode") == "local" and started.get("pgid"):
        if problem := stop.stop_group(started):
            raise EnvironmentUnusable(
                problem, hint="stop it, then run `uvdock lock resolve --abort`"
            )
        ctx.out.detail(f"no process of the relock's group {started['pgid']} runs any more")
        return
    if started.get("mode") == "srun" and started.get("job"):
        from uvdock.run import slurm_containers

        slurm_containers.cancel_job(ctx.env, started["job"], wait=30.0)
        ctx.out.detail(f"no Slurm job {started['job']} of the relock runs any more")
        return
    engine, container = started.get("engine", ""), started.get("container", "")
    if not engine or not container:
        return
    if started.get("mode") == "run":
        problem = stop.stop_container(engine, container, ctx.env)
    else:
        problem = stop.stop_tagged(engine, container, started.get("run_id", ""), ctx.env)
    if problem:
        raise EnvironmentUnusable(
            problem, hint="stop it, then run `uvdock lock resolve --abort` again"
        )
    ctx.out.detail(f"stopped what the interrupted run started in {container}")
