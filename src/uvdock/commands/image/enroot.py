"""`uvdock image enroot [--output FILE]`: import the CI image as a squashfs for enroot / pyxis."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.stream import stream
from uvdock.errors import EnvironmentUnusable

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--output", metavar="FILE", help="the .sqsh to write (default: enroot-output)"
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.image import build as imagebuild
        from uvdock.run import proc

        cfg = ctx.config
        from uvdock.run.engines import operand

        operand(args.output or cfg.enroot_output, "enroot output")
        operand(cfg.image, "image")
        engine = cfg.engine if cfg.engine in ("docker", "podman") else "docker"
        argv = imagebuild.enroot_argv(args.output or cfg.enroot_output, cfg.image, engine)
        if ctx.dry_run:
            ctx.out.command(argv)
            return 0
        if proc.which("enroot", ctx.env) is None:
            raise EnvironmentUnusable(
                "enroot is not installed or not on PATH",
                hint="run this where enroot is installed (a Slurm login node), "
                "or give srun --container-image the image directly",
            )
        stream(ctx, argv)
        ctx.out.info(f"wrote {argv[3]}; use it with srun --container-image")
        return 0
