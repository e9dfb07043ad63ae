"""`uvdock recipe show [CASE]`: every place a test case runs, from the recipe YAMLs; without a
case, every case with its files and its scopes per environment."""

from __future__ import annotations

import argparse

from uvdock.commands import base
from uvdock.context import Context


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        text = "test case name, e.g. ckpt_converter; without it, list every case"
        parser.add_argument("case", metavar="CASE", nargs="?", help=text)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.recipes import marks
        from uvdock.recipes import parse as recipes

        if args.case is None:
            summaries = marks.case_summaries(recipes.load(ctx.repo, ctx.config.recipes_dir))
            if ctx.options.json:
                ctx.out.json({"cases": [summary._asdict() for summary in summaries]})
                return 0
            table = [
                (
                    s.case,
                    ", ".join(s.files),
                    "; ".join(f"{e}: {', '.join(v)}" for e, v in s.scopes.items()),
                )
                for s in summaries
            ]
            title = f"{len(summaries)} test cases in {ctx.config.recipes_dir}"
            ctx.out.table(["case", "file", "scopes per environment"], table, title=title)
            return 0
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
        columns = ["where", "environment", "scope", "platforms", "issue"]
        ctx.out.table(columns, rows, title=args.case)
        return 0
