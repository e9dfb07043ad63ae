"""`uvdock image bump TAG|--latest [--lts] [--offline]`: move one lane's managed pins to
nvcr.io/nvidia/pytorch:TAG.

Without --lts only the dev lane changes; --lts is the explicit opt-in for the LTS lane, and
then only the LTS lane changes. Every managed pin of the lane is written, or none. Before
anything is written the registry must have the tag for every platform of the lane
(commands/registry_check.py); --offline skips that and says so.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from uvdock.commands.base import Command as BaseCommand

if TYPE_CHECKING:
    from uvdock.commands.image.registry_check import TagReport
    from uvdock.context import Context
    from uvdock.image.bump import BumpPlan
    from uvdock.image.contents import ImageReport
    from uvdock.image.pins import LaneRules, Scan
    from uvdock.registry.client import RegistryClient


def _print_handoff(ctx: Context, tag: str, lane: str) -> None:
    from uvdock.image.pr_body import handoff_lines

    for line in handoff_lines(tag, lane):
        ctx.out.info(line)


class Command(BaseCommand):
    _client: RegistryClient | None = None  # the tag check's, reused for --pr-body

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "tag", metavar="TAG", nargs="?", help="YY.MM-py3, or nvcr.io/nvidia/pytorch:YY.MM-py3"
        )
        parser.add_argument(
            "--latest",
            action="store_true",
            help="the registry's newest YY.MM-py3 tag published for every platform of the lane",
        )
        parser.add_argument(
            "--offline", action="store_true", help="do not ask the registry whether TAG exists"
        )
        from uvdock.commands import optin

        optin.add_lts_flag(parser, "bump the LTS lane instead of dev (the explicit opt-in)")
        parser.add_argument(
            "--lane",
            metavar="NAME",
            help="the lane to bump when it is not dev (`image show` names each, e.g."
            " docker/Dockerfile.ci:BASE_IMAGE)",
        )
        parser.add_argument(
            "--allow-downgrade", action="store_true", help="accept a tag older than the current one"
        )
        parser.add_argument(
            "--pr-body",
            action="store_true",
            help="print the pull request's title and Markdown body (pins changed, checklist)",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands.image.worktree import absent_tracked
        from uvdock.image.bump import plan_bump
        from uvdock.image.scan import scan_managed

        scan = scan_managed(ctx.repo, ctx.config, absent_tracked(ctx))
        lane = _lane(scan, args)
        if any(rule.lane == lane and rule.arg for rule in scan.lanes):
            return self._found(ctx, args, scan, lane)
        if args.latest:
            from uvdock.commands.image import bump_latest

            picked = bump_latest.pick(ctx, args, scan, lane)
            if picked is None:
                return 0
            tag, report, self._client = picked
        else:
            tag, report = self._tag_argument(args, scan), None
        from uvdock.image.pins import configured_gitlab_file

        gitlab_file = configured_gitlab_file(ctx.config)[0]
        plan = plan_bump(
            ctx.repo, scan, lane, tag, allow_downgrade=args.allow_downgrade, gitlab_file=gitlab_file
        )
        for warning in plan.warnings:
            ctx.out.warn(f"{warning.location}: {warning.message}")
        if plan.noop:
            if ctx.options.json:
                ctx.out.json(self._payload(plan, report=report, pr_body=args.pr_body))
            else:
                ctx.out.info(f"{lane} pins are already at {tag}: nothing to change")
            return 0
        report = report or self._check_registry(ctx, args, tag)
        contents = self._contents(ctx, args, plan)
        from uvdock.files import edit

        if ctx.dry_run:
            ctx.out.diff(edit.plan_diff(plan.edits))
            if ctx.options.json:
                ctx.out.json(self._payload(plan, report=report, contents=contents))
            else:
                ctx.out.info(
                    f"dry run: {len(plan.changed)} {lane} pins would change; nothing written"
                )
                # The hand-off is part of the plan: show what comes after the write.
                self._handoff(ctx, plan, contents)
            return 0
        edit.apply(plan.edits)  # an OS error: every file put back, exit 3 naming the path
        if ctx.options.json:
            ctx.out.json(self._payload(plan, report=report, contents=contents))
            return 0
        before = plan.current or "?"
        if plan.current == tag:
            ctx.out.info(f"{lane} base image already at {tag}; pins brought in line with it:")
        else:
            ctx.out.info(f"{lane} base image: {before} -> {tag}")
        for pin in plan.changed:
            ctx.out.info(f"  {pin.location}: {pin.tag} -> {tag}")
        self._handoff(ctx, plan, contents)
        return 0

    def _found(self, ctx: Context, args: argparse.Namespace, scan: Scan, lane: str) -> int:
        """A lane found by meaning: its references move to the image TAG names."""
        from uvdock.errors import InputRefused
        from uvdock.files import edit
        from uvdock.image.bump import plan_found_bump

        if args.latest and args.tag is not None:
            raise InputRefused(
                f"--latest picks the tag itself; got TAG {args.tag} as well",
                hint="drop TAG, or drop --latest",
            )
        if args.tag is None and not args.latest:
            raise InputRefused(
                "name a TAG, or pass --latest", hint=f"uvdock image bump TAG --lane {lane}"
            )
        tag = args.tag or self._found_latest(ctx, args, scan, lane)
        plan = plan_found_bump(ctx.repo, scan, lane, tag, allow_downgrade=args.allow_downgrade)
        if not plan.noop and not args.latest:
            self._check_found(ctx, args, plan)
        for warning in plan.warnings:
            ctx.out.warn(f"{warning.location}: {warning.message}")
        if ctx.options.json:
            ctx.out.json(self._payload(plan))
        if plan.noop:
            ctx.out.info(f"{lane} is already at {plan.tag}: nothing to change")
            return 0
        if ctx.dry_run:
            ctx.out.diff(edit.plan_diff(plan.edits))
            ctx.out.info(f"dry run: {len(plan.changed)} {lane} references would change;"
                         " nothing written")  # fmt: skip
            return 0
        edit.apply(plan.edits)
        ctx.out.info(f"{lane}: {plan.current or '?'} -> {plan.tag}")
        for pin in plan.changed:
            ctx.out.info(f"  {pin.location}: {pin.value} -> {plan.tag}")
        return 0

    def _found_latest(self, ctx: Context, args: argparse.Namespace, scan: Scan, lane: str) -> str:
        """The newest tag of the lane's image family published for every platform."""
        from uvdock.commands.image import registry_check
        from uvdock.errors import InputRefused
        from uvdock.image.pins import reference_tag
        from uvdock.registry.tags import newest, parse_image

        offline = registry_check.offline_reason(ctx, args.offline)
        if offline:
            raise InputRefused(
                f"--latest asks the registry for its newest tag, but offline mode is on ({offline})",
                hint="name the tag instead: uvdock image bump TAG",
            )
        current = parse_image(reference_tag(scan, lane)[0] or "")[0]
        if current is None:
            raise InputRefused(f"{lane} has no image uvdock can order: name the tag")
        client = registry_check.client_for(
            ctx, hint=registry_check.NAMED_TAG_OFFLINE_HINT, image=current.repository
        )
        platforms = ctx.config.platforms
        tag, _ = registry_check.newest_complete_tag(
            client, platforms, log=ctx.out.detail, order=lambda tags: newest(tags, current)
        )
        ctx.out.info(f"newest {current.repository} tag of its family: {tag}")
        found = parse_image(f"{current.repository}:{tag}")[0]
        return tag if found is not None and found.key > current.key else current.tag  # never back

    def _check_found(self, ctx: Context, args: argparse.Namespace, plan: BumpPlan) -> None:
        """The registry has the new tag for every platform, unless offline (then said)."""
        from uvdock.commands.image import registry_check
        from uvdock.registry.tags import parse_image

        image = parse_image(plan.changed[0].value)[0] if plan.changed else None
        repository = image.repository if image else ""
        offline = registry_check.offline_reason(ctx, args.offline)
        if offline or not repository:
            ctx.out.info(f"not checked that {plan.tag} exists in the registry: offline ({offline})")
            return
        client = registry_check.client_for(ctx, hint=registry_check.OFFLINE_HINT, image=repository)
        report = registry_check.require_tag(client, plan.tag, ctx.config.platforms, repository)
        ctx.out.info(f"registry: {plan.tag} is published for {', '.join(report.platforms)}")

    def _contents(
        self, ctx: Context, args: argparse.Namespace, plan: BumpPlan
    ) -> ImageReport | None:
        """Both images' contents for --pr-body (read before anything is written), with the
        tag check's client: its token and its time budget go on."""
        if not args.pr_body:
            return None
        from uvdock.commands.image.image_contents import read_report

        return read_report(ctx, args, plan.current, plan.tag, self._client)

    @staticmethod
    def _tag_argument(args: argparse.Namespace, scan: Scan) -> str:
        from uvdock.errors import InputRefused
        from uvdock.registry.tags import parse_tag_argument

        if args.tag is None:
            from uvdock.image.bump import current_tag

            lane = "lts" if args.lts else "dev"
            current = current_tag(scan, lane)
            at = f" (the {lane} pins are at {current})" if current else ""
            flag = "--lts " if args.lts else ""
            raise InputRefused(
                "name a TAG, or pass --latest",
                hint=f"uvdock image bump {flag}--latest picks the registry's newest tag{at}",
            )
        return parse_tag_argument(args.tag)

    def _check_registry(self, ctx: Context, args: argparse.Namespace, tag: str) -> TagReport:
        from uvdock.commands.image import registry_check

        offline = registry_check.offline_reason(ctx, args.offline)
        if offline:
            base = registry_check.registry_base(ctx)[0]
            ctx.out.info(f"not checked that {tag} exists in the registry: offline ({offline})")
            return registry_check.TagReport(False, base, skipped=offline)
        client = registry_check.client_for(ctx, hint=registry_check.OFFLINE_HINT)
        report = registry_check.require_tag(client, tag, ctx.config.platforms)
        self._client = client
        ctx.out.info(f"registry: {tag} is published for {', '.join(report.platforms)}")
        return report

    @staticmethod
    def _handoff(ctx: Context, plan: BumpPlan, contents: ImageReport | None) -> None:
        from uvdock.image import pr_body

        if plan.current == plan.tag:
            # Drifting pins fixed, no new base image: no pull request title or checklist fits.
            ctx.out.info(
                f"already at {plan.tag}: this is no base-image bump; commit the fixed pins"
                " with the change that needs them"
            )
            return
        if contents is None:
            _print_handoff(ctx, plan.tag, plan.lane)
            return
        body = pr_body.render(plan.lane, plan.tag, plan.current, plan.changed, contents)
        ctx.out.stdout.write(ctx.out.shown(body))
        ctx.out.stdout.flush()

    @staticmethod
    def _payload(
        plan: BumpPlan,
        *,
        report: TagReport | None = None,
        pr_body: bool = False,
        contents: ImageReport | None = None,
    ) -> dict[str, Any]:
        from uvdock.image import pr_body as body

        payload = {
            "lane": plan.lane,
            "from": plan.current,
            "to": plan.tag,
            "changed": [pin.to_json() for pin in plan.changed],
            "warnings": [warning.to_json() for warning in plan.warnings],
            "handoff": body.handoff(plan.tag, plan.lane),
            "registry": report.to_json() if report is not None else None,
        }
        if contents is not None:
            payload["image_contents"] = contents.to_json()
            payload["pr_body"] = body.render(
                plan.lane, plan.tag, plan.current, plan.changed, contents
            )
        elif pr_body:  # nothing to change: no body to write either
            payload["pr_body"] = body.render(plan.lane, plan.tag, plan.current, plan.changed)
        return payload


def _lane(scan: Scan, args: argparse.Namespace) -> str:
    """--lane, --lts, dev when it has pins, else the one found lane TAG fits."""
    from uvdock.errors import InputRefused

    names = [rule.lane for rule in scan.lanes]
    if args.lane is not None:
        if args.lane not in names:
            raise InputRefused(
                f"no lane {args.lane!r}", hint=f"lanes of this repository: {', '.join(names)}"
            )
        return str(args.lane)
    if args.lts or scan.lane_pins("dev"):
        return "lts" if args.lts else "dev"
    found = [rule for rule in scan.lanes if rule.arg and scan.lane_pins(rule.lane)]
    if not found:
        return "dev"
    fitting = [rule.lane for rule in found if _fits(scan, rule, args.tag)]
    if len(found) == 1 or len(fitting) == 1:
        return (fitting or [found[0].lane])[0]
    raise InputRefused(
        f"{len(fitting) or len(found)} lanes could take {args.tag or 'a bump'}: name one with --lane",
        hint=f"lanes: {', '.join(rule.lane for rule in found)}",
    )


def _fits(scan: Scan, rule: LaneRules, text: str | None) -> bool:
    from uvdock.errors import InputRefused
    from uvdock.image.bump import found_target

    if text is None:
        return False
    try:
        found_target(scan, rule, text)
    except InputRefused:
        return False
    return True
