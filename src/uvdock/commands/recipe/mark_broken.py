"""`uvdock recipe mark-broken CASE --issue N --reason TEXT`: move a case's scopes to -broken."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.cli import optin
from uvdock.commands import base

if TYPE_CHECKING:
    from uvdock.context import Context
    from uvdock.recipes.parse import Recipe
    from uvdock.recipes.plan import Plan


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("case", metavar="CASE", help="test case name")
        parser.add_argument(
            "--issue",
            required=True,
            metavar="N",
            help="tracking issue: 4321, '#4321' or its GitHub/GitLab issue URL",
        )
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
        optin.add_lts_flag(parser, "also mark rows of the lts environment (the explicit opt-in)")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands.recipe.edit import edit_recipes
        from uvdock.recipes import mark

        issue = mark.parse_issue(args.issue)
        mark.validate(issue, args.reason)
        request = mark.MarkRequest(
            case=args.case,
            issue=issue,
            reason=args.reason.strip(),
            environments=tuple(args.environment),
            platforms=tuple(args.platform),
            scopes=tuple(args.scope),
            suffix=ctx.config.broken_suffix,
            lts=args.lts,
        )
        argv = self._argv(ctx, args)
        if mark.LTS_ENVIRONMENT in request.environments:
            optin.require_lts(args.lts, "recipe mark-broken --environment lts", argv)

        def make_plan(found: list[Recipe]) -> Plan:
            plan = mark.plan_mark(found, request)
            # Nothing outside LTS to mark: if LTS rows are what is left, say how to opt in.
            lts_left = not plan.changes and not args.lts
            if lts_left and mark.plan_mark(found, request._replace(lts=True)).changes:
                optin.require_lts(False, "recipe mark-broken on LTS rows", argv)
            return plan

        return edit_recipes(ctx, args.case, make_plan)

    @staticmethod
    def _argv(ctx: Context, args: argparse.Namespace) -> list[str]:
        words = ["recipe", "mark-broken", args.case, "--issue", args.issue, "--reason", args.reason]
        for flag, values in (
            ("--environment", args.environment),
            ("--scope", args.scope),
            ("--platform", args.platform),
        ):
            for value in values:
                words += [flag, value]
        return optin.command_line(ctx, *words)
