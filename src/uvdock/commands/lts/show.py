"""`uvdock lts show`: the LTS pin set as a table, or `--json` {"pins": [...]}."""

from __future__ import annotations

import argparse

from uvdock.commands import base
from uvdock.context import Context
from uvdock.lts import requirements as lts


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.epilog = "LTS pins change only on explicit request: see `uvdock lts pin --help`."

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        path = ctx.repo / ctx.config.lts_requirements
        display = ctx.rel(path)
        pin_set = lts.load(path, display)
        if ctx.options.json:
            ctx.out.json({"path": display, "pins": [pin.as_json() for pin in pin_set.pins]})
        else:
            rows = [
                (
                    pin.line,
                    pin.name,
                    pin.version or pin.url or pin.specifier or "*",
                    ",".join(pin.extras),
                    pin.marker or "",
                    pin.comment.removeprefix("#").strip(),
                )
                for pin in pin_set.pins
            ]
            columns = ("line", "name", "version or URL", "extras", "marker", "comment")
            ctx.out.table(columns, rows, title=f"{display}: {len(rows)} LTS pins")
        if pin_set.problems:
            ctx.out.warn(f"{len(pin_set.problems)} line(s) are not pins; run `uvdock lts check`")
        return 0
