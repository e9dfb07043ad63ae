"""`uvdock image bump TAG|--latest [--lts] [--offline]`: move one lane's managed pins to TAG,
every one or none, once the registry has TAG for every platform of the lane (--offline skips
that and says so). --latest is never a downgrade: a lane already newer is reported current."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from uvdock.cli import optin
from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.files import edit
from uvdock.image import pr_body
from uvdock.image.bump import current_tag, found_target, plan_bump, plan_found_bump
from uvdock.image.contents import ImageReport, problems
from uvdock.image.pins import configured_gitlab_file, reference_tag
from uvdock.image.scan import scan_managed
from uvdock.registry import lane_check, oci
from uvdock.registry.image_config import read_tag
from uvdock.registry.tags import REPOSITORY, newest, parse_image, parse_tag_argument
from uvdock.run.worktree import absent_tracked

if TYPE_CHECKING:
    from uvdock.image.bump import BumpPlan
    from uvdock.image.pins import LaneRules, Scan
    from uvdock.registry.client import RegistryClient
    from uvdock.registry.lane_check import TagReport


class Command(base.Command):
    _client: RegistryClient  # the tag check's, kept for --pr-body: its token and budget go on

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "tag", metavar="TAG", nargs="?", help="YY.MM-py3, or nvcr.io/nvidia/pytorch:YY.MM-py3"
        )
        base.add_switches(
            parser,
            latest="the registry's newest YY.MM-py3 tag published for every platform of the lane",
            offline="do not ask the registry whether TAG exists",
        )
        optin.add_lts_flag(parser, "bump the LTS lane instead of dev (the explicit opt-in)")
        parser.add_argument(
            "--lane",
            metavar="NAME",
            help="the lane to bump when it is not dev (`image show` names each, e.g."
            " docker/Dockerfile.ci:BASE_IMAGE)",
        )
        base.add_switches(
            parser,
            allow_downgrade="accept a tag older than the current one",
            pr_body="print the pull request's title and Markdown body (pins changed, checklist)",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        scan = scan_managed(ctx.repo, ctx.config, absent_tracked(ctx))
        lane = _lane(scan, args)
        if args.latest and args.tag is not None:
            raise InputRefused(
                f"--latest picks the tag itself; got TAG {args.tag} as well",
                hint="drop TAG, or drop --latest",
            )
        # A found lane's image is its reference's; a configured lane's is NGC PyTorch.
        found = any(rule.lane == lane and rule.arg for rule in scan.lanes)
        now = parse_image(reference_tag(scan, lane)[0] or "")[0] if found else None
        image = now.repository if now else "" if found else REPOSITORY
        was = now.tag if now else None if found else current_tag(scan, lane)
        if args.tag is None and not args.latest:
            flag = {"dev": "", "lts": "--lts "}.get(lane, f"--lane {lane} ")
            raise InputRefused(
                "name a TAG, or pass --latest",
                hint=f"uvdock image bump {flag}--latest picks the registry's newest tag"
                + (f" (the {lane} pins are at {was})" if was else ""),
            )
        report = None
        if args.latest:
            if found and now is None:
                raise InputRefused(f"{lane} has no image uvdock can order: name the tag")
            lane_check.require_online(
                ctx.config,
                "--latest asks the registry for its newest tag",
                "name the tag instead: uvdock image bump TAG",
                args.offline,
            )
            client = self._connect(ctx, lane_check.NAMED_TAG_OFFLINE_HINT, image)
            order = partial(newest, like=now) if now else oci.release_tags
            platforms = ctx.config.platforms
            tag, report = lane_check.newest_complete_tag(client, platforms, ctx.out.detail, order)
            ctx.out.info(f"newest {image} tag published for {', '.join(platforms)}: {tag}")
            new, old = (parse_image(f"{image}:{t}")[0] for t in (tag, was or ""))
            if new is not None and old is not None and new.key < old.key:
                return _current(ctx, lane, old.tag, tag, report)
        else:
            tag = args.tag if found else parse_tag_argument(args.tag)
        gitlab_file = configured_gitlab_file(ctx.config)[0]
        bump: Callable[..., BumpPlan] = (
            plan_found_bump if found else partial(plan_bump, gitlab_file=gitlab_file)
        )
        plan = bump(ctx.repo, scan, lane, tag, allow_downgrade=args.allow_downgrade)
        return self._write(ctx, args, plan, report, image, found)

    def _write(
        self,
        ctx: Context,
        args: argparse.Namespace,
        plan: BumpPlan,
        report: TagReport | None,
        image: str,
        found: bool,
    ) -> int:
        """Check the registry, read the images' contents for --pr-body, write, say what moved."""
        lane, tag = plan.lane, plan.tag
        for warning in plan.warnings:
            ctx.out.warn(f"{warning.location}: {warning.message}")
        if plan.noop:
            if ctx.options.json:
                ctx.out.json(_payload(plan, report, args.pr_body))
            else:
                ctx.out.info(f"{lane} pins are already at {tag}: nothing to change")
            return 0
        offline = lane_check.offline_reason(ctx.config, args.offline)
        if report is None and (offline or not image):
            ctx.out.info(f"not checked that {tag} exists in the registry: offline ({offline})")
            # Only a configured lane's skipped report names the registry: a found lane's
            # offline bump never parses config `registry`.
            base = "" if found else lane_check.registry_base(ctx.config)[0]
            report = lane_check.TagReport(False, base, skipped=offline)
        elif report is None:
            client = self._connect(ctx, lane_check.OFFLINE_HINT, image)
            report = lane_check.require_tag(client, tag, ctx.config.platforms, image)
            ctx.out.info(f"registry: {tag} is published for {', '.join(report.platforms)}")
        # A found lane whose reference names no image has no contents to read.
        contents = self._contents(ctx, plan, offline) if args.pr_body and image else None
        if ctx.dry_run:
            ctx.out.diff(edit.plan_diff(plan.edits))
        else:
            edit.apply(plan.edits)  # an OS error: every file put back, exit 3 naming the path
        if ctx.options.json:
            ctx.out.json(_payload(plan, report, args.pr_body, contents))
            return 0
        if ctx.dry_run:
            noun = "references" if found else "pins"
            ctx.out.info(
                f"dry run: {len(plan.changed)} {lane} {noun} would change; nothing written"
            )
        elif plan.current == tag:
            ctx.out.info(f"{lane} base image already at {tag}; pins brought in line with it:")
        else:
            ctx.out.info(f"{lane} base image: {plan.current or '?'} -> {tag}")
        for pin in plan.changed if not ctx.dry_run else ():
            ctx.out.info(f"  {pin.location}: {pin.tag} -> {tag}")
        _handoff(ctx, plan, contents)  # in a dry run too: what comes after the write
        return 0

    def _connect(self, ctx: Context, hint: str, image: str) -> RegistryClient:
        self._client = lane_check.client_for(
            ctx.config, ctx.env, ctx.out.detail, hint=hint, image=image
        )
        return self._client

    def _contents(self, ctx: Context, plan: BumpPlan, offline: str) -> ImageReport:
        """Both images' contents for --pr-body, read before anything is written. Never blocks
        the bump: offline mode, an unreachable registry or an unreadable config blob each
        become a sentence in the body, not an error."""
        old, new = plan.current, plan.tag
        if offline:
            return ImageReport(old, new, skipped=f"offline: {offline}")
        try:
            after = read_tag(self._client, new, keep_going=True)
        except EnvironmentUnusable as exc:
            ctx.out.warn(f"image contents not read: {exc.message}")
            return ImageReport(old, new, skipped=f"the registry could not be read: {exc.message}")
        before, unread = None, tuple[str, ...]()
        if old is not None:
            try:
                before = read_tag(self._client, old, keep_going=True)
            except EnvironmentUnusable as exc:
                ctx.out.warn(f"{old}: image contents not read: {exc.message}")
                unread = (f"{old}: {exc.message}",)
        for line in problems((before, after)):
            ctx.out.warn(f"image contents not read: {line}")
        report = ImageReport(old, new, before, after, unread=unread)
        for line in report.to_json()["callouts"]:
            ctx.out.info(f"image contents: {line}")
        return report


def _current(ctx: Context, lane: str, current: str, latest: str, report: TagReport) -> int:
    """--latest on a lane already past the registry's newest: nothing changes."""
    if ctx.options.json:
        ctx.out.json(
            {"lane": lane, "from": current, "to": current, "latest": latest, "changed": []}
            | {"warnings": [], "registry": report.to_json()}
        )
    else:
        ctx.out.info(
            f"{lane} pins are current: {current} is newer than {latest}; nothing to change"
        )
    return 0


def _handoff(ctx: Context, plan: BumpPlan, contents: ImageReport | None) -> None:
    if plan.current == plan.tag:
        # Drifting pins fixed, no new base image: no pull request title or checklist fits.
        ctx.out.info(
            f"already at {plan.tag}: this is no base-image bump; commit the fixed pins"
            " with the change that needs them"
        )
    elif contents is None:
        for line in pr_body.handoff_lines(plan.tag, plan.lane):
            ctx.out.info(line)
    else:
        body = pr_body.render(plan.lane, plan.tag, plan.current, plan.changed, contents)
        ctx.out.stdout.write(ctx.out.shown(body))
        ctx.out.stdout.flush()


def _payload(
    plan: BumpPlan, report: TagReport | None, body: bool, contents: ImageReport | None = None
) -> dict[str, Any]:
    payload = {
        "lane": plan.lane,
        "from": plan.current,
        "to": plan.tag,
        "changed": [pin.to_json() for pin in plan.changed],
        "warnings": [warning.to_json() for warning in plan.warnings],
        "handoff": pr_body.handoff(plan.tag, plan.lane),
        "registry": report.to_json() if report is not None else None,
    }
    if contents is not None:
        payload["image_contents"] = contents.to_json()
    if body:  # with nothing to change, no contents were read
        payload["pr_body"] = pr_body.render(
            plan.lane, plan.tag, plan.current, plan.changed, contents
        )
    return payload


def _lane(scan: Scan, args: argparse.Namespace) -> str:
    """--lane, --lts, dev when it has pins, else the one found lane TAG fits."""
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
    fitting = [rule.lane for rule in found if args.tag and _fits(scan, rule, args.tag)]
    if len(found) == 1 or len(fitting) == 1:
        return (fitting or [found[0].lane])[0]
    raise InputRefused(
        f"{len(fitting) or len(found)} lanes could take {args.tag or 'a bump'}: "
        "name one with --lane",
        hint=f"lanes: {', '.join(rule.lane for rule in found)}",
    )


def _fits(scan: Scan, rule: LaneRules, text: str) -> bool:
    try:
        found_target(scan, rule, text)
    except InputRefused:
        return False
    return True
