"""`uvdock sync [--profile NAME] [--group G]... [--extra X]... [--lts]`: uv sync --locked in the container."""

from __future__ import annotations

import argparse

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.context import Context


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--profile",
            default="dev",
            choices=("dev", "lint", "lts"),
            help="what to install (default: dev)",
        )
        parser.add_argument(
            "--group", action="append", default=[], metavar="G", help="also this dependency group"
        )
        parser.add_argument(
            "--extra", action="append", default=[], metavar="X", help="also this extra"
        )
        parser.add_argument(
            "--lts", action="store_true", help="explicit opt-in required by --profile lts"
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands import uvwork
        from uvdock.commands.base import shim_for
        from uvdock.project import pyproject, syncplan

        if args.profile == "lts":
            from uvdock.commands import optin

            optin.require_lts(
                args.lts, "sync --profile lts", optin.command_line(ctx, "sync", "--profile", "lts")
            )
        deps = pyproject.read(ctx.repo)
        protected = pyproject.protected_packages(
            ctx.repo / ctx.config.dockerfile, ctx.config.protected_packages
        )
        plan = syncplan.build(
            args.profile, deps, groups=args.group, extras=args.extra, protected=protected
        )
        for note in plan.notes:
            ctx.out.warn(note)
        shim = shim_for(ctx)
        uvwork.report_uv(ctx, shim)
        code = shim.run_uv(plan.uv_args)
        if code == 0 and args.profile == "lts":
            requirements = ctx.config.lts_requirements
            code = shim.run_uv(["pip", "install", "-r", requirements])
        if ctx.dry_run:
            return 0
        if code != 0:
            raise uvwork.uv_failed(plan.uv_args, code)
        ctx.out.info(f"environment synced ({args.profile} profile) {shim.placement.describe()}")
        return 0
