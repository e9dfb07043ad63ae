"""`uvdock image tags [--lts] [--limit N]`: the registry's YY.MM-py3 tags, newest first.

Each row says which lane pins that tag: the dev lane always, the LTS lane with --lts (it is
only looked at on request, like every LTS action). A pin the registry does not list is
warned about: CI would fail to pull it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from uvdock.commands.base import Command as BaseCommand

if TYPE_CHECKING:
    from uvdock.context import Context


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        from uvdock.commands import optin

        optin.add_lts_flag(parser, "mark the LTS lane's pin too")
        parser.add_argument(
            "--limit", type=_positive, metavar="N", help="show only the newest N tags"
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands.image import registry_check
        from uvdock.image.bump import current_tag
        from uvdock.image.scan import scan_managed
        from uvdock.registry import oci
        from uvdock.registry.tags import REPOSITORY

        offline = registry_check.offline_reason(ctx, False)
        if offline:
            from uvdock.errors import InputRefused

            raise InputRefused(
                f"image tags asks the registry, but offline mode is on ({offline})",
                hint="for this run: UVDOCK_OFFLINE=0 uvdock image tags",
            )
        scan = scan_managed(ctx.repo, ctx.config)
        lanes = ("dev", "lts") if args.lts else ("dev",)
        pinned = {lane: current_tag(scan, lane) for lane in lanes}
        client = registry_check.client_for(ctx, hint=None)
        found = oci.release_tags(client.tags())
        for lane, tag in pinned.items():
            if tag is not None and tag not in found:
                ctx.out.warn(f"the {lane} pin {tag} is not among the registry's tags")
        shown = found[: args.limit] if args.limit else found
        rows = [(tag, [lane for lane in lanes if pinned[lane] == tag]) for tag in shown]
        if ctx.options.json:
            ctx.out.json(self._payload(client.base_url, found, rows, pinned))
            return 0
        ctx.out.info(
            f"{REPOSITORY} at {client.base_url}: {len(found)} YY.MM-py3 tags"
            + (f", newest {len(rows)} shown" if len(rows) < len(found) else ", newest first")
        )
        if rows:
            table = [(tag, ", ".join(f"{lane} pin" for lane in lanes_)) for tag, lanes_ in rows]
            ctx.out.table(("tag", "pinned by"), table)
        return 0

    @staticmethod
    def _payload(
        url: str,
        found: list[str],
        rows: list[tuple[str, list[str]]],
        pinned: dict[str, str | None],
    ) -> dict[str, Any]:
        return {
            "registry": url,
            "total": len(found),
            "pins": pinned,
            "tags": [{"tag": tag, "pinned_by": lanes} for tag, lanes in rows],
        }
