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
            "--platform",
            action="append",
            default=[],
            metavar="P",
            help="only this platform (splits rows)",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock import edit
        from uvdock.recipes import mark as recipes_edit
        from uvdock.recipes import parse as recipes

        recipes_edit.validate(args.issue, args.reason)
        found = recipes.require_case(ctx.repo, ctx.config.recipes_dir, args.case)
        request = recipes_edit.MarkRequest(
            case=args.case,
            issue=args.issue,
            reason=args.reason.strip(),
            environments=tuple(args.environment),
            platforms=tuple(args.platform),
            suffix=ctx.config.broken_suffix,
        )
        plan = recipes_edit.plan_mark(found, request)
        if ctx.dry_run:
            ctx.out.diff(edit.plan_diff(plan.changed_edits))
        else:
            edit.apply(plan.changed_edits)
        if ctx.options.json:
            ctx.out.json(plan.as_json(args.case, ctx.dry_run))
        for line in [] if ctx.options.json else plan.report(ctx.dry_run):
            ctx.out.info(line)
        return 0
