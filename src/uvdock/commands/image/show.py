"""`uvdock image show [--digests | --versions] [--lts]`: every base-image pin, managed or
informational; with --digests, each managed tag's manifest digest per platform, read from the
registry (the LTS lane's only with --lts); --versions adds the component versions the image
configuration states (commands/image/show_registry.py)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--digests",
            action="store_true",
            help="ask the registry for each managed tag's manifest digest per platform",
        )
        parser.add_argument(
            "--versions",
            action="store_true",
            help="with the digests, the component versions each image's configuration states",
        )
        parser.add_argument(
            "--explain",
            action="store_true",
            help="print what uvdock found and uses as a ready [tool.uvdock] table",
        )
        from uvdock.commands import optin

        optin.add_lts_flag(parser, "with --digests / --versions: the LTS lane's tags too")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands.image.worktree import absent_tracked
        from uvdock.image import pins
        from uvdock.image.scan import scan_managed
        from uvdock.registry.tags import PREFIX
        from uvdock.run import git

        scan = scan_managed(ctx.repo, ctx.config, absent_tracked(ctx))
        for finding in scan.findings:
            if finding.kind == "not-checked-out":
                ctx.out.warn(f"{finding.path}: {finding.message}")
        if args.explain:
            from uvdock.image.explain import render

            unmanaged = [pin for pin in scan.unclassified if pin.note]
            text = render(scan, ctx.config, ctx.layers.origins, pins.check(scan), unmanaged)
            ctx.out.stdout.write(ctx.out.shown(text))
            return 0
        if args.digests or args.versions:
            from uvdock.commands.image import show_registry

            return show_registry.show(ctx, scan, args)
        # Matrix rows no lane selects come first among the others: a new layout shows here.
        known = [*scan.pins, *scan.unclassified]
        found = pins.all_pins(known, git.grep_files(ctx.repo, PREFIX))
        if ctx.options.json:
            ctx.out.json({"pins": [pin.to_json() for pin in found]})
            return 0
        if not found:
            ctx.out.info(f"no nvcr.io/nvidia/pytorch:<tag> pins in {ctx.repo}")
            return 0
        rows = [
            (
                pin.location,
                pin.lane or "-",
                pin.tag if pin.value.startswith(PREFIX) else pin.value,
                pins.kind_of(pin) + (f": {pin.note}" if pin.note else ""),
            )
            for pin in found
        ]
        ctx.out.table(("location", "lane", "tag", "kind"), rows, title="base-image pins")
        return 0
