"""`uvdock trust [--show | --revoke]`: let this repository's configuration choose where code runs.

A repository's `uvdock.toml` / `[tool.uvdock]` may set keys that change where code runs
or what the container can reach (config_trust.GATED_KEYS); uvdock refuses them until the
user has read them and run `uvdock trust`, which records the configuration's sha256 in the
user's own configuration folder. Any later change to the configuration needs trust again.
Writes go to that folder only (never into the repository), so this is not a WRITER.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.base import arg
from uvdock.config import settings as config_module
from uvdock.config import trust as config_trust
from uvdock.context import Context
from uvdock.files.edit import atomic_write, ensure_private_folder


class Command(BaseCommand):
    description = (
        "A repository's uvdock.toml / [tool.uvdock] may set engine, engine-args, "
        "container, venv, uv-cache, container-uv-cache and enroot-output only once you "
        "trust it: read what it sets (--show), then run `uvdock trust`, which records "
        "the configuration's sha256 for this repository in "
        "$XDG_CONFIG_HOME/uvdock/trusted. Any change to it needs trust again."
    )
    arguments = (
        arg(
            "--show",
            action="store_true",
            help="show what the repository's configuration sets and whether you trust it",
            exclusive=True,
        ),
        arg(
            "--revoke",
            action="store_true",
            help="forget the trust given to this repository",
            exclusive=True,
        ),
    )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        repo = Path(os.path.realpath(ctx.repo))
        table, source = config_module.file_table(repo)
        records = config_trust.read_records_to_rewrite(ctx.env)
        keys = ctx.widening(config_trust.gated(table)) if source else {}
        sha = config_trust.digest(table)
        known = config_trust.find(records, repo, source) if source else None
        state = _state(source, keys, known, sha)
        if args.revoke:
            kept = config_trust.without(records, repo)
            changed = len(kept) != len(records)
            self._save(ctx, kept, changed, "forgot the trust given to" if changed else "")
            return self._report(ctx, repo, source, keys, "revoked" if changed else state, changed)
        if args.show or state in ("trusted", "nothing to trust"):
            return self._report(ctx, repo, source, keys, state, False)
        self._show_keys(ctx, source, keys)
        record = config_trust.TrustRecord(str(repo), source, sha)
        self._save(ctx, [*config_trust.without(records, repo), record], True, "trusted")
        return self._report(ctx, repo, source, keys, "trusted", True)

    def _save(
        self, ctx: Context, records: list[config_trust.TrustRecord], changed: bool, verb: str
    ) -> None:
        path = config_trust.trust_file(ctx.env)
        if not changed:
            return
        if ctx.dry_run:
            ctx.out.info(f"would write {path}")
            return
        ensure_private_folder(path.parent)
        atomic_write(path, config_trust.render_records(records))
        ctx.out.detail(f"{verb} this repository in {path}")

    def _show_keys(self, ctx: Context, source: str, keys: dict[str, Any]) -> None:
        if ctx.out.json_mode:
            return
        ctx.out.info(f"{source} sets what changes where code runs or what the container can reach:")
        for key, value in keys.items():
            ctx.out.info(f"  {key} = {value!r}")

    def _report(
        self,
        ctx: Context,
        repo: Path,
        source: str,
        keys: dict[str, Any],
        state: str,
        changed: bool,
    ) -> int:
        if ctx.out.json_mode:
            ctx.out.json(
                {
                    "repo": str(repo),
                    "source": source or None,
                    "keys": keys,
                    "state": state,
                    "changed": changed and not ctx.dry_run,
                }
            )
            return 0
        where = f"{source} in {repo}" if source else f"{repo} (no uvdock.toml or [tool.uvdock])"
        if ctx.options.dry_run and changed:
            ctx.out.info(f"would mark {where}: {state}")
            return 0
        if not changed and keys and state != "revoked":
            self._show_keys(ctx, source, keys)
        ctx.out.info(f"{where}: {state}")
        if state in ("not trusted", "changed since trusted"):
            ctx.out.info("review it, then run `uvdock trust`")
        return 0


def _state(
    source: str, keys: dict[str, Any], known: config_trust.TrustRecord | None, sha: str
) -> str:
    if not source or not keys:
        return "nothing to trust"
    if known is None:
        return "not trusted"
    return "trusted" if known.sha256 == sha else "changed since trusted"
