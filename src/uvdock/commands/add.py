"""`uvdock add PKG... [--group G | --optional X]`: uv add in the container."""

from __future__ import annotations

import argparse

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.depchange import change_dependencies
from uvdock.commands.lock.diff_view import add_lock_format_option
from uvdock.context import Context


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "packages", nargs="+", metavar="PKG", help="requirement, e.g. 'einops~=0.8'"
        )
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--group", metavar="G", help="add to dependency group G")
        where.add_argument(
            "--optional", metavar="X", help="add to extra X ([project.optional-dependencies])"
        )
        parser.add_argument(
            "--no-sync",
            action="store_true",
            help="do not bring a running container's environment up to date afterwards",
        )
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        return change_dependencies(
            ctx,
            "add",
            args.packages,
            group=args.group,
            optional=args.optional,
            fmt=args.format,
            sync=not args.no_sync,
        )
