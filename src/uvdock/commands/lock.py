"""`uvdock lock [--check] [--upgrade] [--upgrade-package P]...`: uv lock in the container."""

from __future__ import annotations

import argparse

from uvdock.commands import lockdiff_view
from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.context import Context
from uvdock.errors import CheckFailed


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="fail (exit 1) when uv.lock is out of date"
        )
        parser.add_argument("--upgrade", action="store_true", help="allow every package to move")
        lockdiff_view.add_lock_format_option(parser)
        parser.add_argument(
            "--upgrade-package", action="append", default=[], metavar="P", help="allow P to move"
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands import uvwork
        from uvdock.commands.base import shim_for

        shim = shim_for(ctx)
        uv_args = ["lock"]
        if args.check:
            uv_args.append("--check")
        if args.upgrade:
            uv_args.append("--upgrade")
        for package in args.upgrade_package:
            uv_args += ["--upgrade-package", package]
        uvwork.report_uv(ctx, shim)
        before = uvwork.lock_bytes(ctx)
        code = shim.run_uv(uv_args, writes=() if args.check else ("uv.lock",))
        if ctx.dry_run:
            return 0
        if args.check:
            if code != 0:
                raise CheckFailed(
                    "uv.lock is out of date with pyproject.toml",
                    hint="run `uvdock lock` and commit uv.lock",
                )
            ctx.out.info("uv.lock is up to date")
            return 0
        if code != 0:
            raise uvwork.uv_failed(uv_args, code)
        uvwork.show_lock_change(ctx, before, args.format)
        return 0
