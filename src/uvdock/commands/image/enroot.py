"""`uvdock image enroot [--output FILE]`: import the CI image as a squashfs for enroot / pyxis,
also where only podman is installed (run/slurm.py)."""

from __future__ import annotations

import argparse

from uvdock.cli import optin
from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import EnvironmentUnusable
from uvdock.image import build as imagebuild
from uvdock.run import proc, slurm
from uvdock.run.engines import operand
from uvdock.run.slurm import import_sqsh


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--output",
            metavar="FILE",
            help="the .sqsh to write (default: enroot-output; with --lts, its -lts twin)",
        )
        optin.add_lts_flag(parser, "import the LTS image (lts-image) to enroot-output's -lts twin")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        cfg = ctx.config
        default = slurm.lts_output(cfg.enroot_output) if args.lts else cfg.enroot_output
        output = operand(args.output or default, "enroot output")
        image = operand(cfg.lts_image if args.lts else cfg.image, "image")
        if not ctx.dry_run and proc.which("enroot", ctx.env) is None:
            raise EnvironmentUnusable(
                "enroot is not installed or not on PATH",
                hint="run this where enroot is installed (a Slurm login node), "
                "or give srun --container-image the image directly",
            )
        engine = base.engine_for(ctx)
        if ctx.dry_run:
            ctx.out.command(imagebuild.enroot_argv(output, image, engine))
            return 0
        target = ctx.user_path(args.output) if args.output else ctx.repo / output
        import_sqsh(image, engine, target, env=ctx.env, cwd=ctx.repo, show=ctx.out.detail)
        ctx.out.info(f"wrote {ctx.rel(target)} from {engine}'s {image}; `--engine srun` uses it")
        return 0
