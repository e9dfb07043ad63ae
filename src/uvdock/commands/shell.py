"""`uvdock shell [--slurm] [--gpus]`: an interactive shell in the CI container."""

from __future__ import annotations

import argparse
import sys

from uvdock.commands.base import Command as BaseCommand
from uvdock.context import Context


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--slurm", action="store_true", help="run through srun with pyxis")
        parser.add_argument("--gpus", action="store_true", help="give the container all GPUs")
        parser.add_argument(
            "--nodes", type=int, default=None, help="srun --nodes (default: config)"
        )
        parser.add_argument(
            "--gpus-per-node", type=int, default=None, help="srun --gpus-per-node (default: config)"
        )
        parser.add_argument("--shell", default="bash", help="the shell to start (default: bash)")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands.base import engine_for, shim_for
        from uvdock.run import engines, proc

        cfg = ctx.config
        shim = shim_for(ctx)
        command = [args.shell]
        tty = sys.stdin.isatty()
        if args.slurm or cfg.engine == "srun":
            sqsh = ctx.repo / cfg.enroot_output
            image = str(sqsh) if sqsh.is_file() and not ctx.options.image else cfg.image
            placement = engines.Placement("srun", "srun", image=image, extra_args=cfg.engine_args)
            argv = engines.srun_argv(
                placement,
                command,
                mounts=shim.mounts,
                pty=True,
                nodes=args.nodes or cfg.slurm_nodes,
                gpus_per_node=args.gpus_per_node or cfg.slurm_gpus_per_node,
            )
        elif cfg.container or cfg.engine == "local":
            return shim.run(command, tty=tty)
        else:
            engine = engine_for(ctx)
            placement = engines.Placement(
                "run", engine, image=cfg.image, extra_args=cfg.engine_args
            )
            argv = engines.run_argv(
                placement,
                command,
                mounts=shim.mounts,
                tty=True,
                gpus=args.gpus,
                name=shim.container_name,  # so an interrupt can stop it
            )
            if ctx.dry_run:
                ctx.out.command(argv, placement=placement)
                return 0
            shim.check_usable()
            return shim.foreground(argv)
        if ctx.dry_run:
            ctx.out.command(argv, placement=placement)
            return 0
        forward = proc.forwarded_signal(placement.mode)
        return proc.run_foreground(argv, cwd=ctx.repo, env=ctx.env, forward=forward)
