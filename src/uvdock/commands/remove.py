"""`uvdock remove PKG... [--group G | --optional X]`: uv remove in the container, as add."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.base import shim_for
from uvdock.commands.lock.diff_view import add_lock_format_option
from uvdock.run.uv_project import NO_SYNC_HELP, change_dependencies

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("packages", nargs="+", metavar="PKG", help="package name")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--group", metavar="G", help="remove from dependency group G")
        group.add_argument("--optional", metavar="X", help="remove from extra X")
        parser.add_argument("--no-sync", action="store_true", help=NO_SYNC_HELP)
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        return change_dependencies(ctx, "remove", args, shim_for)
