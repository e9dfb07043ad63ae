"""`uvdock remove PKG... [--group G | --optional X]`: uv remove in the container, as add."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.base import shim_for

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        from uvdock.commands.lock.diff_view import add_lock_format_option

        parser.add_argument("packages", nargs="+", metavar="PKG", help="package name")
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--group", metavar="G", help="remove from dependency group G")
        where.add_argument("--optional", metavar="X", help="remove from extra X")
        parser.add_argument(
            "--no-sync",
            action="store_true",
            help="do not bring a running container's environment up to date afterwards",
        )
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.run.uv_project import change_dependencies

        return change_dependencies(ctx, "remove", args, shim_for)
