"""`uvdock recipe unmark CASE`: undo the marks `recipe mark-broken` made, byte for byte."""

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
        from uvdock import edit
        from uvdock.recipes import parse as recipes
        from uvdock.recipes import unmark as recipes_unmark

        found = recipes.require_case(ctx.repo, ctx.config.recipes_dir, args.case)
        plan = recipes_unmark.plan_unmark(found, args.case, ctx.config.broken_suffix)
        if ctx.dry_run:
            ctx.out.diff(edit.plan_diff(plan.changed_edits))
        else:
            edit.apply(plan.changed_edits)
        if ctx.options.json:
            ctx.out.json(plan.as_json(args.case, ctx.dry_run))
        for line in [] if ctx.options.json else plan.report(ctx.dry_run):
            ctx.out.info(line)
        return 0
