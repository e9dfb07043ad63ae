"""`uvdock image check`: do the managed base-image pins of each lane agree? (CI, pre-commit)
The success path stays small: no rich, no git grep, only the managed files are read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uvdock.commands import base
from uvdock.errors import CheckFailed

FORMAT_HELP = "github: workflow-command annotations; gitlab: a code-quality report (JSON)"

if TYPE_CHECKING:
    import argparse

    from uvdock.context import Context
    from uvdock.image.pins import Finding


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        base.add_format_option(parser, "github", "gitlab", help=FORMAT_HELP)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.image import pins
        from uvdock.image.scan import scan_managed
        from uvdock.run.worktree import absent_tracked

        scan = scan_managed(ctx.repo, ctx.config, absent_tracked(ctx))
        findings = pins.check(scan)
        lanes = {
            rule.lane: pins.reference_tag(scan, rule.lane)[0]
            for rule in scan.lanes
            if scan.lane_pins(rule.lane)
        }
        if ctx.options.json:
            managed, found = [p.to_json() for p in scan.pins], [f.to_json() for f in findings]
            ctx.out.json({"lanes": lanes, "managed": managed, "findings": found})
            return 1 if findings or not lanes else 0
        if not lanes and not findings:  # a check that manages nothing cannot pass
            for pin in scan.unclassified:
                why = f": {pin.note}" if pin.note else ""
                ctx.out.info(f"{pin.location}: base `{pin.value}` is managed by no lane{why}")
            raise CheckFailed(
                "no base image is managed: nothing to check",
                hint="`uvdock image show --explain` prints what uvdock found and the [tool.uvdock]"
                " settings that manage a base it cannot find alone",
            )
        if args.format != "text":  # for CI: findings on the diff; --json above wins
            from uvdock.image import ci_report

            ctx.out.stdout.write(ctx.out.shown(ci_report.render(args.format, findings)))
        elif not findings:
            summary = ", ".join(
                f"{lane} {tag} ({_plural(len(scan.lane_pins(lane)), 'pin')})"
                for lane, tag in lanes.items()
            )
            ctx.out.info(f"base-image pins agree: {summary}")
        for finding in findings if args.format == "text" else ():
            ctx.out.info(f"{finding.location}: {finding.message}")
        if findings:  # the summary and hint on stderr, exit 1
            raise _failed(findings, lanes)
        return 0


def _failed(findings: list[Finding], lanes: dict[str, str | None]) -> CheckFailed:
    # A bump refuses a lane with a pin it cannot edit exactly: never recommend it there.
    unsupported = {f.lane for f in findings if f.kind == "unsupported-shape"}
    drifting = sorted({f.lane for f in findings if f.kind in ("drift", "malformed")} - unsupported)
    hint = None
    if unsupported:
        hint = "rewrite the pins named above in their plain shape by hand; then check again"
    elif drifting:
        lane = drifting[0]
        flag = {"dev": "", "lts": " --lts"}.get(lane, f" --lane {lane}")
        hint = f"`uvdock image bump {lanes.get(lane) or 'TAG'}{flag}`"
        hint += " rewrites every managed pin of that lane"
    return CheckFailed(f"{_plural(len(findings), 'base-image pin finding')}", hint=hint)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("s" if count != 1 else "")
