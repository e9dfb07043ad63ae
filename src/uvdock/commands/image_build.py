"""`uvdock image build [--lts] [--tag T]`: build the CI image, always `--target main`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, ClassVar

from uvdock.commands.base import Command as BaseCommand
from uvdock.errors import CommandFailed

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(BaseCommand):
    help: ClassVar[str] = "build the CI image (--target main)"

    def configure(self, parser: argparse.ArgumentParser) -> None:
        from uvdock import optin

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

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock import imagebuild
        from uvdock.shim import pick_engine

        spec = imagebuild.build_spec(ctx.repo, ctx.config, lts=args.lts, tag=args.tag)
        engine = pick_engine(ctx)
        argv = imagebuild.build_argv(engine, spec)
        if ctx.dry_run:
            ctx.out.command(argv)
            return 0
        lane = "the LTS image (--lts)" if spec.lane == "lts" else "the dev image"
        ctx.out.info(f"building {spec.tag}, {lane}: {spec.dockerfile} --target {spec.target}")
        ctx.out.info(f"base image {spec.base_image} (from {spec.pin_file})")
        ctx.out.detail("+ " + " ".join(argv))
        code = _run_with_status(ctx, argv, f"{engine} build {spec.tag}")
        if code != 0:
            failure = CommandFailed(argv, code, message=f"{engine} build exited with status {code}")
            failure.hint = "save the output and run `uvdock doctor LOGFILE` to name the cause"
            raise failure
        ctx.out.info(f"built {spec.tag}")
        return 0


def _run_with_status(ctx: Context, argv: list[str], label: str) -> int:
    """Stream the build; on a terminal, keep a spinner line going below it."""
    from uvdock import proc

    if not sys.stdout.isatty() or ctx.options.quiet or ctx.options.json:
        return proc.run_foreground(argv, cwd=ctx.repo, env=ctx.env)
    from rich.console import Console

    with Console(stderr=True).status(label):
        return proc.run_foreground(argv, cwd=ctx.repo, env=ctx.env)
