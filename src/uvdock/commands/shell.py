"""`uvdock shell [--slurm] [--gpus]`: an interactive shell in the CI container."""

from __future__ import annotations

import argparse
import sys

from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import InputRefused
from uvdock.run import engines, slurm, slurm_steps
from uvdock.run.ci_container import CIContainer
from uvdock.run.probe import engine_init


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        base.add_switches(
            parser, slurm="run through srun with pyxis", gpus="give the container all GPUs"
        )
        nodes = "nodes to allocate; the shell runs on the first (default: config)"
        parser.add_argument("--nodes", type=int, help=nodes)
        parser.add_argument(
            "--gpus-per-node", type=int, help="srun --gpus-per-node (default: config)"
        )
        parser.add_argument("--shell", default="bash", help="the shell to start (default: bash)")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        cfg = ctx.config
        if args.slurm or cfg.engine == "srun":
            shim = CIContainer.of(ctx, cfg.replace(engine="srun"), engine="--slurm")
            placement, argv = shim.placement, _srun_argv(ctx, shim, args)
            wait = f"asking Slurm for a shell (srun --pty) in {placement.describe()}..."
        elif cfg.container or cfg.engine == "local":
            if cfg.container and not ctx.dry_run:
                ctx.out.info(f"opening {args.shell} in container {cfg.container}")
            return CIContainer.of(ctx).run([args.shell], tty=sys.stdin.isatty())
        else:  # a new container of the image, removed when the shell exits
            shim, engine = CIContainer.of(ctx), base.engine_for(ctx)
            init = engine_init(engine, ctx.env)
            placement = engines.Placement(
                "run", engine, image=cfg.image, extra_args=cfg.engine_args, init=init
            )
            # Named, so that an interrupt can stop it.
            argv = engines.run_argv(
                placement,
                [args.shell],
                mounts=shim.mounts,
                tty=True,
                gpus=args.gpus,
                name=shim.container_name,
            )
            wait = (
                f"starting {args.shell} in a new {engine} container of {cfg.image} (this "
                f"repository at {cfg.workdir}; the container is removed when the shell exits)..."
            )
        if ctx.dry_run:
            ctx.out.command(argv, placement=placement)
            return 0
        # Checking the image and starting a container can take many seconds (vfs storage):
        # say what the wait is before it, not a blank screen.
        ctx.out.info(wait)
        shim.check_usable()
        if placement.mode == "srun":
            shim.srun.unpack()
        return shim.foreground(argv, interactive=True)


def _srun_argv(ctx: Context, shim: CIContainer, args: argparse.Namespace) -> list[str]:
    """A shell through `srun --pty` in the image's reusable unpacked container: the .sqsh
    of the local build (enroot-output), checked like every srun step first."""
    cfg = ctx.config
    gpus = args.gpus_per_node if args.gpus_per_node is not None else cfg.slurm_gpus_per_node
    if gpus and not ctx.dry_run:
        # GPUs are asked for only where the partition has them (sinfo's gres): the configured
        # count is dropped on a partition without, a count passed on the command line refused.
        partition, gres = slurm.partition_gres(ctx.env, shim.placement.extra_args)
        if gres is not None and "gpu" not in gres:
            where = partition or "(default)"
            if args.gpus_per_node is not None:
                raise InputRefused(
                    f"Slurm partition {where} has no GPUs (sinfo gres: {gres}); "
                    "pass --gpus-per-node 0"
                )
            ctx.out.info(f"partition {where} has no GPUs: asking for none")
            gpus = 0
    # The shell is one task, on one node, unpacked there first; more nodes are an allocation
    # around it (salloc), not unpacked for nothing.
    first = shim.srun.nodes()  # the shim's steps are one task (slurm_steps.ONCE)
    argv = engines.srun_argv(
        shim.placement,
        [args.shell],
        mounts=shim.mounts,
        pty=True,
        gpus_per_node=gpus or None,  # 0: a cluster (or partition) without GPUs
        job_name=shim.container_name,
        shape=slurm_steps.shape_args(slurm_steps.ONCE, first),
    )
    nodes = args.nodes or cfg.slurm_nodes
    if nodes > 1:
        extra = shim.placement.extra_args
        argv = [*slurm_steps.allocation_argv(nodes, first, extra, gpus, shim.container_name), *argv]
    return argv
