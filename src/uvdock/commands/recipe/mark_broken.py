"""`uvdock recipe mark-broken CASE --issue N --reason TEXT`: move a case's scopes to -broken."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands import base

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("case", metavar="CASE", help="test case name")
        parser.add_argument("--issue", type=int, required=True, metavar="N", help="tracking issue")
        parser.add_argument(
            "--reason", required=True, metavar="TEXT", help="why it is broken (one line)"
        )
        parser.add_argument(
            "--environment",
            action="append",
            default=[],
            metavar="E",
            help="only rows of this environment",
        )
        parser.add_argument(
            "--scope",
            action="append",
            default=[],
            metavar="S",
            help="break only this scope (repeatable); default: every scope of the matched rows",
        )
        parser.add_argument(
            "--platform",
            action="append",
            default=[],
            metavar="P",
            help="only this platform (splits rows)",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands.recipe.edit import edit_recipes
        from uvdock.recipes import mark

        mark.validate(args.issue, args.reason)
        request = mark.MarkRequest(
            case=args.case,
            issue=args.issue,
            reason=args.reason.strip(),
            environments=tuple(args.environment),
            platforms=tuple(args.platform),
            scopes=tuple(args.scope),
            suffix=ctx.config.broken_suffix,
        )
        return edit_recipes(ctx, args.case, lambda found: mark.plan_mark(found, request))
