"""`uvdock image build [--lts] [--tag T]`: build the CI image, always `--target main`."""

from __future__ import annotations

import argparse
import time

from uvdock.cli import optin
from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import InputRefused
from uvdock.image import build as imagebuild
from uvdock.run.build_check import check_heredocs, stream
from uvdock.run.engines import operand


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "Build the CI image from the lane's Dockerfile with FROM_IMAGE_NAME taken from its "
            "pin file. The build always stops at the `main` stage (build-target): the `jet` "
            "stage needs an internal secret. Without --lts it never builds the LTS image."
        )
        optin.add_lts_flag(
            parser,
            "build the LTS image (Dockerfile.ci.lts, the LTS pin, tag lts-image); "
            "explicit opt-in: " + optin.LTS_POLICY,
        )
        parser.add_argument(
            "--tag", metavar="T", help="image tag (default: image / lts-image from the config)"
        )
        parser.add_argument(
            "--target",
            metavar="STAGE",
            help="the Dockerfile stage to stop at (default: build-target, main); the `jet` "
            "stage, which needs an internal secret, only when named here",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        target = args.target or ctx.config.build_target
        # Docker stage names ignore case; a stage that needs something only NVIDIA's CI has
        # is built only when named on the command line, never from a file or variable.
        if not args.target and target.lower() == "jet":
            raise InputRefused(
                f"{ctx.said('build_target')}: the `{target}` stage needs an internal secret; "
                "nothing was built",
                hint=f"build it only on purpose: uvdock image build --target {target}",
            )
        config = ctx.config.replace(build_target=target)
        spec = imagebuild.build_spec(ctx.repo, config, lts=args.lts, tag=args.tag)
        operand(spec.tag, "image tag")  # `-t --foo` would hand the engine an option
        engine = base.engine_for(ctx)
        argv = imagebuild.build_argv(engine, spec)
        check_heredocs(ctx, engine, spec.dockerfile)  # --dry-run shows no build it refuses
        if ctx.dry_run:
            ctx.out.command(argv)
            return 0
        lane = "the LTS image (--lts)" if spec.lane == "lts" else "the dev image"
        ctx.out.info(f"building {spec.tag}, {lane}: {spec.dockerfile} --target {spec.target}")
        ctx.out.info(f"base image {spec.base_image} (from {spec.pin_file})")
        started = time.monotonic()
        stream(ctx, argv, hint="save the output and run `uvdock doctor LOGFILE` to name the cause")
        seconds = time.monotonic() - started
        minutes, secs = divmod(int(seconds), 60)
        elapsed = f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"
        ctx.out.info(f"built {spec.tag} in {elapsed}")
        return 0
