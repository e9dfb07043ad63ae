"""`uvdock image check`: do the managed base-image pins of each lane agree? (CI, pre-commit)

The success path stays small: no rich, no git grep, only the managed files are read.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand

if TYPE_CHECKING:
    from uvdock.commands.context import Context


class Command(BaseCommand):
    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.image import pins
        from uvdock.image.scan import scan_managed

        scan = scan_managed(ctx.repo, ctx.config)
        findings = pins.check(scan)
        lanes = {
            rule.lane: pins.reference_tag(scan, rule.lane)[0]
            for rule in scan.lanes
            if scan.lane_pins(rule.lane)
        }
        if ctx.options.json:
            ctx.out.json(
                {
                    "ok": not findings,
                    "lanes": lanes,
                    "managed": [pin.to_json() for pin in scan.pins],
                    "findings": [finding.to_json() for finding in findings],
                }
            )
            return 1 if findings else 0
        if not findings:
            summary = ", ".join(
                f"{lane} {tag} ({len(scan.lane_pins(lane))} pins)" for lane, tag in lanes.items()
            )
            ctx.out.info(f"base-image pins agree: {summary or 'no managed pins found'}")
            return 0
        for finding in findings:
            ctx.out.info(f"{finding.location}: {finding.message}")
        from uvdock.errors import CheckFailed

        drifting = sorted({f.lane for f in findings if f.kind in ("drift", "malformed")})
        hint = None
        if drifting:
            lane = drifting[0]
            hint = (
                f"`uvdock image bump {lanes.get(lane) or 'TAG'}{' --lts' if lane == 'lts' else ''}`"
            )
            hint += " rewrites every managed pin of that lane"
        count = len(findings)
        raise CheckFailed(f"{count} base-image pin finding{'s' if count != 1 else ''}", hint=hint)
