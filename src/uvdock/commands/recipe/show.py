"""`uvdock recipe show CASE`: every place a test case runs, from the recipe YAMLs."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands import base

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "case", metavar="CASE", help="test case name, e.g. gpt3_mcore_te_tp2_pp2"
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.recipes import marks
        from uvdock.recipes import parse as recipes

        found = recipes.require_case(ctx.repo, ctx.config.recipes_dir, args.case)
        places = marks.placements(found, args.case)
        if ctx.options.json:
            ctx.out.json({"case": args.case, "runs": [p.as_json() for p in places]})
            return 0
        rows = [
            (
                f"{p.path}:{p.line}",
                ", ".join(p.environments),
                ", ".join(p.scopes),
                ", ".join(p.platforms) + (" (spec)" if p.inherited_platforms else ""),
                f"#{p.issue}" if p.issue else "",
            )
            for p in places
        ]
        ctx.out.table(
            ["where", "environment", "scope", "platforms", "issue"], rows, title=args.case
        )
        return 0
