"""`uvdock recipe unmark CASE`: undo the marks `recipe mark-broken` made, byte for byte, and
the team's hand-made ones (`-broken` scopes, a `# Broken: ... see issue #N.` comment).
Nothing to undo is exit 1."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands import base

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("case", metavar="CASE", help="test case name")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands.recipe.edit import edit_recipes
        from uvdock.recipes import unmark

        suffix = ctx.config.broken_suffix
        return edit_recipes(
            ctx,
            args.case,
            lambda found: unmark.plan_unmark(found, args.case, suffix),
            nothing_to_do_exit=1,
        )
