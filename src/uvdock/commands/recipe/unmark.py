"""`uvdock recipe unmark CASE`: undo `recipe mark-broken`'s marks byte for byte, and hand-made
ones (`-broken` scopes, a `# Broken: ... see issue #N.` comment); nothing to undo is exit 1."""

from __future__ import annotations

import argparse

from uvdock.cli import optin
from uvdock.commands import base
from uvdock.context import Context


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("case", metavar="CASE", help="test case name")
        optin.add_lts_flag(parser, "also unmark rows of the lts environment (the explicit opt-in)")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands.recipe import edit_recipes
        from uvdock.recipes import mark

        suffix = ctx.config.broken_suffix
        return edit_recipes(
            ctx,
            "recipe unmark",
            args.case,
            lambda found, lts: mark.plan_unmark(found, args.case, suffix, lts=lts),
            lts=args.lts,
            argv=optin.command_line(ctx, "recipe", "unmark", args.case),
            nothing_exit=1,
        )
