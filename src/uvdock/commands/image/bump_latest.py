"""`image bump --latest`: which tag the registry's newest complete release is, or "current".

The newest YY.MM-py3 tag published for every platform of the lane is the target. It is
never a downgrade: when the lane is already newer (a mirror that lags), the pins are
reported current and nothing changes (exit 0).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands.image import registry_check
from uvdock.errors import InputRefused
from uvdock.image.bump import current_tag
from uvdock.registry.tags import tag_key

if TYPE_CHECKING:
    from uvdock.commands.image.registry_check import TagReport
    from uvdock.context import Context
    from uvdock.image.pins import Scan
    from uvdock.registry.client import RegistryClient


def pick(
    ctx: Context, args: argparse.Namespace, scan: Scan, lane: str
) -> tuple[str, TagReport, RegistryClient] | None:
    """(tag, what the registry said, the client for the rest of the command), or None when
    the lane is already at or past it."""
    if args.tag is not None:
        raise InputRefused(
            f"--latest picks the tag itself; got TAG {args.tag} as well",
            hint="drop TAG, or drop --latest",
        )
    offline = registry_check.offline_reason(ctx, args.offline)
    if offline:
        raise InputRefused(
            f"--latest asks the registry for its newest tag, but offline mode is on ({offline})",
            hint="name the tag instead: uvdock image bump TAG",
        )
    platforms = ctx.config.platforms
    client = registry_check.client_for(ctx, hint=registry_check.NAMED_TAG_OFFLINE_HINT)
    tag, report = registry_check.newest_complete_tag(client, platforms, log=ctx.out.detail)
    ctx.out.info(f"newest tag published for {', '.join(platforms)}: {tag}")
    current = current_tag(scan, lane)
    if current is None or tag_key(tag) >= tag_key(current):
        return tag, report, client
    if ctx.options.json:
        ctx.out.json(
            {
                "lane": lane,
                "from": current,
                "to": current,
                "latest": tag,
                "changed": [],
                "warnings": [],
                "registry": report.to_json(),
            }
        )
    else:
        ctx.out.info(f"{lane} pins are current: {current} is newer than {tag}; nothing to change")
    return None
