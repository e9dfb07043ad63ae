"""`image show --digests | --versions`: what the registry holds for each managed tag.

Asked directly, the registry's answer is the result: a config blob that is missing or not
JSON is exit 3 here (the bump's pull request body, by contrast, only says what it could not
read). A managed tag the registry does not have is a finding (exit 1), the others are shown.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands.image import registry_check
from uvdock.errors import CheckFailed, InputRefused

if TYPE_CHECKING:
    from uvdock.context import Context
    from uvdock.image.pins import Scan
    from uvdock.registry.image_config import TagImage

SHOWN_VERSIONS = ("PyTorch", "CUDA", "cuDNN", "NCCL")  # the table's columns; JSON has all


def _managed_tags(scan: Scan, lanes: tuple[str, ...]) -> list[tuple[str, str]]:
    """(lane, tag) of every managed, well-formed pin, each once, in scan order."""
    seen: list[tuple[str, str]] = []
    for lane in lanes:
        for pin in scan.lane_pins(lane):
            if pin.well_formed and (lane, pin.tag) not in seen:
                seen.append((lane, pin.tag))
    return seen


def show(ctx: Context, scan: Scan, args: argparse.Namespace) -> int:
    from uvdock.registry.image_config import read_tag

    offline = registry_check.offline_reason(ctx, False)
    if offline:
        raise InputRefused(
            f"image show --digests asks the registry, but offline mode is on ({offline})",
            hint="for this run: UVDOCK_OFFLINE=0 uvdock image show --digests",
        )
    lanes = ("dev", "lts") if args.lts else ("dev",)
    client = registry_check.client_for(ctx, hint=None)
    found: list[tuple[str, str, TagImage | None]] = []
    for lane, tag in _managed_tags(scan, lanes):
        found.append((lane, tag, read_tag(client, tag, configs=args.versions)))
    missing = [f"{tag} ({lane})" for lane, tag, image in found if image is None]
    if ctx.options.json:
        ctx.out.json({"images": [_json(lane, tag, image) for lane, tag, image in found]})
    else:
        _table(ctx, found, args.versions)
    if missing:
        raise CheckFailed(
            f"not in the registry ({client.base_url}): {', '.join(missing)}",
            hint="CI cannot pull a tag the registry does not have: `uvdock image tags`",
        )
    return 0


def _json(lane: str, tag: str, image: TagImage | None) -> dict[str, object]:
    from uvdock.image.contents import compare, tag_json

    if image is None:
        return {"lane": lane, "tag": tag, "found": False}
    versions = [c.to_json() for c in compare(None, image)]
    return {"lane": lane, "found": True, **tag_json(image), "versions": versions}


def _table(ctx: Context, found: list[tuple[str, str, TagImage | None]], versions: bool) -> None:
    from uvdock.image.contents import compare

    header = ("lane", "tag", "platform", "digest")
    extra = SHOWN_VERSIONS if versions else ()
    rows: list[tuple[str, ...]] = []
    for lane, tag, image in found:
        if image is None:
            rows.append((lane, tag, "-", "not in the registry", *("" for _ in extra)))
            continue
        for platform in image.platforms:
            stated = {
                c.label: c.after for c in compare(None, image._replace(platforms=(platform,)))
            }
            cells = tuple(stated.get(label, "-") for label in extra)
            rows.append((lane, tag, platform.platform or "?", platform.digest, *cells))
    ctx.out.table((*header, *extra), rows, title="base-image digests")
