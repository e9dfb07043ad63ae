"""`image bump --pr-body`: read both images from the registry for the pull request body.

Never blocks the bump: offline mode, an unreachable registry or an unreadable config blob
each end up as a sentence in the body ("not checked", "not read") instead of an error. The
tag check before it (registry_check.require_tag) is what refuses a tag.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uvdock.commands.image import registry_check
from uvdock.errors import EnvironmentUnusable
from uvdock.image.contents import ImageReport

if TYPE_CHECKING:
    from uvdock.context import Context
    from uvdock.registry.client import RegistryClient


def read_report(
    ctx: Context,
    args: argparse.Namespace,
    old_tag: str | None,
    new_tag: str,
    client: RegistryClient | None = None,
) -> ImageReport:
    from uvdock.registry.image_config import read_tag

    offline = registry_check.offline_reason(ctx, args.offline)
    if offline:
        return ImageReport(old_tag, new_tag, skipped=f"offline: {offline}")
    try:
        client = client or registry_check.client_for(ctx, hint=None)
        after = read_tag(client, new_tag, keep_going=True)
    except EnvironmentUnusable as exc:
        ctx.out.warn(f"image contents not read: {exc.message}")
        return ImageReport(
            old_tag, new_tag, skipped=f"the registry could not be read: {exc.message}"
        )
    before, unread = None, tuple[str, ...]()
    if old_tag is not None:
        try:
            before = read_tag(client, old_tag, keep_going=True)
        except EnvironmentUnusable as exc:
            ctx.out.warn(f"{old_tag}: image contents not read: {exc.message}")
            unread = (f"{old_tag}: {exc.message}",)
    from uvdock.image.contents import problems

    for line in problems((before, after)):
        ctx.out.warn(f"image contents not read: {line}")
    report = ImageReport(old_tag, new_tag, before, after, unread=unread)
    for line in report.to_json()["callouts"]:
        ctx.out.info(f"image contents: {line}")
    return report
