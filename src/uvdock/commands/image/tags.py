"""`uvdock image tags [--lts | --lane NAME] [--limit N]`: the registry's tags, newest first, each
with the lanes that pin it; a pin the registry does not list is warned about."""

from __future__ import annotations

import argparse
from functools import partial

from uvdock.cli import optin
from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import InputRefused
from uvdock.image.bump import current_tag
from uvdock.image.pins import reference_tag
from uvdock.image.scan import scan_managed
from uvdock.registry import lane_check, oci
from uvdock.registry.tags import REPOSITORY, newest, parse_image


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        optin.add_lts_flag(parser, "mark the LTS lane's pin too")
        parser.add_argument(
            "--lane",
            metavar="NAME",
            help="a lane found by meaning (`image show` names them): the tags of its image family",
        )
        parser.add_argument(
            "--limit", type=_positive, metavar="N", help="show only the newest N tags"
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        lane_check.require_online(
            ctx.config,
            "image tags asks the registry",
            "for this run: UVDOCK_OFFLINE=0 uvdock image tags",
        )
        scan = scan_managed(ctx.repo, ctx.config)
        lanes = (args.lane,) if args.lane else ("dev", "lts") if args.lts else ("dev",)
        pinned = {lane: current_tag(scan, lane) for lane in lanes}
        repository, order = REPOSITORY, oci.release_tags
        if args.lane is not None:
            if not any(rule.lane == args.lane and rule.arg for rule in scan.lanes):
                names = ", ".join(rule.lane for rule in scan.lanes if rule.arg) or "none"
                raise InputRefused(f"no found lane {args.lane!r}", hint=f"found lanes: {names}")
            current = parse_image(reference_tag(scan, args.lane)[0] or "")[0]
            if current is None:
                raise InputRefused(f"{args.lane} has no image uvdock can order")
            pinned[args.lane], repository = current.tag, current.repository
            order = partial(newest, like=current)
        client = lane_check.client_for(
            ctx.config, ctx.env, ctx.out.detail, hint=None, image=repository
        )
        found = order(client.tags())
        for lane, tag in pinned.items():
            if tag is not None and tag not in found:
                ctx.out.warn(f"the {lane} pin {tag} is not among the registry's tags")
        shown = found[: args.limit] if args.limit else found
        rows = [(tag, [lane for lane in lanes if pinned[lane] == tag]) for tag in shown]
        if ctx.options.json:
            tags = [{"tag": tag, "pinned_by": lanes} for tag, lanes in rows]
            total = {"registry": client.base_url, "total": len(found), "pins": pinned}
            ctx.out.json(total | {"tags": tags})
            return 0
        ctx.out.info(
            f"{repository} at {client.base_url}: {len(found)}"
            + (f" tags of {args.lane}'s family" if args.lane else " YY.MM-py3 tags")
            + (f", newest {len(rows)} shown" if len(rows) < len(found) else ", newest first")
        )
        if rows:
            table = [(tag, ", ".join(f"{lane} pin" for lane in lanes_)) for tag, lanes_ in rows]
            ctx.out.table(("tag", "pinned by"), table)
        return 0
