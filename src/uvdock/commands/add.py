"""`uvdock add|remove PKG... [--group G | --optional X]`: uv add / remove in the container
(run/uv_project.py); remove.py names only its own verb and help texts."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.base import add_lock_format_option, shim_for
from uvdock.run.uv_project import change_dependencies

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(BaseCommand):
    action = "add"
    helps = (  # PKG, --group, --optional
        "requirement, e.g. 'einops~=0.8'",
        "add to dependency group G",
        "add to extra X ([project.optional-dependencies])",
    )

    def configure(self, parser: argparse.ArgumentParser) -> None:
        packages, in_group, in_extra = self.helps
        parser.add_argument("packages", nargs="+", metavar="PKG", help=packages)
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--group", metavar="G", help=in_group)
        group.add_argument("--optional", metavar="X", help=in_extra)
        parser.add_argument(
            "--no-sync",
            action="store_true",
            help="do not bring a running container's environment up to date afterwards",
        )
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        return change_dependencies(ctx, self.action, args, shim_for)
