"""`uvdock lts drift`: which packages the LTS pins hold back against uv.lock, and by how much."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand
from uvdock.lts import requirements as lts

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        source = parser.add_mutually_exclusive_group()
        source.add_argument(
            "--base", metavar="REF", help="compare with REF's uv.lock (default: base-ref)"
        )
        source.add_argument(
            "--working-tree", action="store_true", help="compare with the working tree's uv.lock"
        )
        source.add_argument(
            "--lock", metavar="PATH", type=Path, help="compare with this uv.lock file"
        )
        parser.add_argument("--all", action="store_true", help="list pins that match the lock too")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.lts import drift as lts_drift

        path = lts.requirements_path(ctx.repo, ctx.config.lts_requirements)
        display = ctx.rel(path)
        pin_set = lts.load(path, display)
        lock_path = None if args.lock is None else ctx.user_path(args.lock)
        source = lts_drift.read_lock_source(
            ctx.repo,
            args.base or ctx.config.base_ref,
            lock_path=lock_path,
            working_tree=args.working_tree,
        )
        drifts = lts_drift.compare(
            pin_set.pins, lts_drift.locked_packages(source.text, source.description)
        )
        shown = drifts if args.all else [d for d in drifts if d.status != "same"]
        same = sum(1 for d in drifts if d.status == "same")
        behind = sum(1 for d in drifts if d.status == "behind")
        if ctx.options.json:
            ctx.out.json(
                {"path": display, "lock": source.description, "drift": [d.as_json() for d in shown]}
            )
            return 0
        ctx.out.info(f"comparing {display} with {source.description}")
        if shown:
            rows = [(d.name, d.lts, d.lock or "-", d.detail) for d in shown]
            ctx.out.table(("name", "LTS", "uv.lock", "LTS is"), rows)
        ctx.out.info(
            f"{behind} held back, {len(drifts) - same - behind} otherwise different, "
            f"{same} the same"
        )
        return 0
