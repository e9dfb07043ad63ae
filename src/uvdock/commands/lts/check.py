"""`uvdock lts check`: every LTS line parses, is unique and is an exact pin (exit 1 if not)."""

from __future__ import annotations

import argparse

from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import CheckFailed
from uvdock.lts import requirements as lts


class Command(base.Command):
    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        path = ctx.repo / ctx.config.lts_requirements
        display = ctx.rel(path)
        pin_set = lts.load(path, display)
        problems = lts.check(pin_set)
        if ctx.options.json:
            listed = [p._asdict() for p in problems]
            ctx.out.json({"path": display, "pins": len(pin_set.pins), "problems": listed})
        else:
            for problem in problems:
                ctx.out.info(f"{display}:{problem.line}: {problem.message}")
        if problems:
            raise CheckFailed(f"{display}: {len(problems)} problem(s) in the LTS pin set")
        if not ctx.options.json:
            ctx.out.info(f"{display}: {len(pin_set.pins)} exact pins, no duplicates")
        return 0
