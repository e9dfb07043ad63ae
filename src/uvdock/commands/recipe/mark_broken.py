"""`uvdock recipe mark-broken CASE --issue N --reason TEXT`: move a case's scopes to -broken."""

from __future__ import annotations

import argparse

from uvdock.cli import optin
from uvdock.commands import base
from uvdock.context import Context

# The filters: option, metavar, help (each repeatable).
_FILTERS = (
    ("--environment", "E", "only rows of this environment"),
    (
        "--scope",
        "S",
        "break only this scope (repeatable); default: every scope of the matched rows",
    ),
    ("--platform", "P", "only this platform (splits rows)"),
)


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("case", metavar="CASE", help="test case name")
        issue_help = "tracking issue: 4321, '#4321' or its GitHub/GitLab issue URL"
        parser.add_argument("--issue", required=True, metavar="N", help=issue_help)
        parser.add_argument(
            "--reason", required=True, metavar="TEXT", help="why it is broken (one line)"
        )
        for flag, metavar, text in _FILTERS:
            parser.add_argument(flag, action="append", default=[], metavar=metavar, help=text)
        optin.add_lts_flag(parser, "also mark rows of the lts environment (the explicit opt-in)")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands.recipe import edit_recipes
        from uvdock.recipes import mark
        from uvdock.recipes.plan import LTS_ENVIRONMENT

        issue = mark.parse_issue(args.issue)
        mark.validate(issue, args.reason)
        request = mark.MarkRequest(
            args.case,
            issue,
            args.reason.strip(),
            tuple(args.environment),
            tuple(args.platform),
            ctx.config.broken_suffix,
            tuple(args.scope),
        )  # lts: each plan below sets it
        words = ["recipe", "mark-broken", args.case, "--issue", args.issue, "--reason", args.reason]
        for flag, _, _ in _FILTERS:
            for value in getattr(args, flag[2:]):
                words += [flag, value]
        argv = optin.command_line(ctx, *words)
        if LTS_ENVIRONMENT in request.environments:
            optin.require_lts(args.lts, "recipe mark-broken --environment lts", argv)

        return edit_recipes(
            ctx,
            "recipe mark-broken",
            args.case,
            lambda found, lts: mark.plan_mark(found, request._replace(lts=lts)),
            lts=args.lts,
            argv=argv,
        )
