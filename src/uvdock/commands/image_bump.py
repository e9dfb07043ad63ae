"""`uvdock image bump TAG [--lts]`: move one lane's managed pins to nvcr.io/nvidia/pytorch:TAG.

Without --lts only the dev lane changes; --lts is the explicit opt-in for the LTS lane, and
then only the LTS lane changes. Every managed pin of the lane is written, or none.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from uvdock.commands.base import Command as BaseCommand

if TYPE_CHECKING:
    from uvdock.commands.context import Context
    from uvdock.image.bump import BumpPlan


def handoff(tag: str) -> dict[str, Any]:
    """What the pull request needs after a bump (the steps of the base-image workflow)."""
    return {
        "title": f"chore: Update Docker image version to {tag}",
        "label": "Run functional tests",
        "rerun": "/ok to test <commit-sha>",
        "golden_values": "--source github --pipeline-id <RUN_ID> --only-failing",
        "regressions": "uvdock recipe mark-broken CASE --issue N --reason TEXT",
    }


def _print_handoff(ctx: Context, tag: str) -> None:
    steps = handoff(tag)
    for line in (
        "",
        "Next, for the pull request:",
        f"  title: {steps['title']}",
        f"  apply the `{steps['label']}` label before the first push",
        f"  from a fork: comment `{steps['rerun']}` for each new commit",
        "  golden-value drift is expected: refresh with the update-golden-values skill:",
        f"    {steps['golden_values']}",
        "  real regressions (hangs, OOM) must not block the bump: file an issue, then",
        f"    {steps['regressions']}",
    ):
        ctx.out.info(line)


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "tag", metavar="TAG", help="YY.MM-py3, or nvcr.io/nvidia/pytorch:YY.MM-py3"
        )
        from uvdock.commands import optin

        optin.add_lts_flag(parser, "bump the LTS lane instead of dev (the explicit opt-in)")
        parser.add_argument(
            "--allow-downgrade", action="store_true", help="accept a tag older than the current one"
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.image.bump import plan_bump
        from uvdock.image.scan import scan_managed
        from uvdock.image.tags import parse_tag_argument

        tag = parse_tag_argument(args.tag)
        lane = "lts" if args.lts else "dev"
        scan = scan_managed(ctx.repo, ctx.config)
        plan = plan_bump(ctx.repo, scan, lane, tag, allow_downgrade=args.allow_downgrade)
        for warning in plan.warnings:
            ctx.out.warn(f"{warning.location}: {warning.message}")
        if plan.noop:
            if ctx.options.json:
                ctx.out.json(self._payload(plan, written=False))
            else:
                ctx.out.info(f"{lane} pins are already at {tag}: nothing to change")
            return 0
        from uvdock import edit

        if ctx.dry_run:
            ctx.out.diff(edit.plan_diff(plan.edits))
            if ctx.options.json:
                ctx.out.json(self._payload(plan, written=False))
            else:
                ctx.out.info(
                    f"dry run: {len(plan.changed)} {lane} pins would change; nothing written"
                )
                # The hand-off is part of the plan: show what comes after the write.
                _print_handoff(ctx, tag)
            return 0
        try:
            edit.apply(plan.edits)
        except OSError as exc:  # apply has put every file back
            from uvdock.errors import EnvironmentUnusable

            raise EnvironmentUnusable(
                f"could not write the pins ({exc}); nothing was changed"
            ) from exc
        if ctx.options.json:
            ctx.out.json(self._payload(plan, written=True))
            return 0
        before = plan.current or "?"
        ctx.out.info(f"{lane} base image: {before} -> {tag}")
        for pin in plan.changed:
            ctx.out.info(f"  {pin.location}: {pin.tag} -> {tag}")
        _print_handoff(ctx, tag)
        return 0

    @staticmethod
    def _payload(plan: BumpPlan, *, written: bool) -> dict[str, Any]:
        return {
            "lane": plan.lane,
            "from": plan.current,
            "to": plan.tag,
            "written": written,
            "changed": [pin.to_json() for pin in plan.changed],
            "warnings": [warning.to_json() for warning in plan.warnings],
            "handoff": handoff(plan.tag),
        }
