"""`uvdock image show [--digests | --versions] [--lts]`: every base-image pin. Asked directly,
the registry's answer is the result: an unreadable config blob is exit 3 here, a managed tag
the registry lacks a finding (exit 1)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.cli import optin
from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import CheckFailed
from uvdock.image import pins
from uvdock.image.contents import compare, tag_json
from uvdock.image.explain import render
from uvdock.image.scan import scan_managed
from uvdock.registry import lane_check
from uvdock.registry.image_config import read_tag
from uvdock.registry.tags import PREFIX
from uvdock.run import git
from uvdock.run.worktree import absent_tracked

if TYPE_CHECKING:
    from uvdock.image.pins import Scan
    from uvdock.registry.image_config import TagImage

SHOWN_VERSIONS = ("PyTorch", "CUDA", "cuDNN", "NCCL")  # the table's columns; JSON has all


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        base.add_switches(
            parser,
            digests="ask the registry for each managed tag's manifest digest per platform",
            versions="with the digests, the component versions each image's configuration states",
            explain="print what uvdock found and uses as a ready [tool.uvdock] table",
        )
        optin.add_lts_flag(parser, "with --digests / --versions: the LTS lane's tags too")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        scan = scan_managed(ctx.repo, ctx.config, absent_tracked(ctx))
        for finding in scan.findings:
            if finding.kind == "not-checked-out":
                ctx.out.warn(f"{finding.path}: {finding.message}")
        if args.explain:
            unmanaged = [pin for pin in scan.unclassified if pin.note]
            text = render(scan, ctx.config, ctx.layers.origins, pins.check(scan), unmanaged)
            ctx.out.stdout.write(ctx.out.shown(text))
            return 0
        if args.digests or args.versions:
            return _registry(ctx, scan, args)
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


def _registry(ctx: Context, scan: Scan, args: argparse.Namespace) -> int:
    """What the registry holds for each managed, well-formed tag (each once, in scan order)."""
    lane_check.require_online(
        ctx.config,
        "image show --digests asks the registry",
        "for this run: UVDOCK_OFFLINE=0 uvdock image show --digests",
    )
    client = lane_check.client_for(ctx.config, ctx.env, ctx.out.detail, hint=None)
    lanes = ("dev", "lts") if args.lts else ("dev",)
    tags = dict.fromkeys(
        (lane, p.tag) for lane in lanes for p in scan.lane_pins(lane) if p.well_formed
    )
    found = [(lane, tag, read_tag(client, tag, configs=args.versions)) for lane, tag in tags]
    if ctx.options.json:
        ctx.out.json({"images": [_json(lane, tag, image) for lane, tag, image in found]})
    else:
        extra = SHOWN_VERSIONS if args.versions else ()
        rows: list[tuple[str, ...]] = []
        for lane, tag, image in found:
            if image is None:
                rows.append((lane, tag, "-", "not in the registry", *("" for _ in extra)))
                continue
            for platform in image.platforms:
                single = image._replace(platforms=(platform,))
                stated = {c.label: c.after for c in compare(None, single)}
                cells = tuple(stated.get(label, "-") for label in extra)
                rows.append((lane, tag, platform.platform or "?", platform.digest, *cells))
        header = ("lane", "tag", "platform", "digest", *extra)
        ctx.out.table(header, rows, title="base-image digests")
    missing = [f"{tag} ({lane})" for lane, tag, image in found if image is None]
    if missing:
        raise CheckFailed(
            f"not in the registry ({client.base_url}): {', '.join(missing)}",
            hint="CI cannot pull a tag the registry does not have: `uvdock image tags`",
        )
    return 0


def _json(lane: str, tag: str, image: TagImage | None) -> dict[str, object]:
    if image is None:
        return {"lane": lane, "tag": tag, "found": False}
    versions = [c.to_json() for c in compare(None, image)]
    return {"lane": lane, "found": True, **tag_json(image), "versions": versions}
