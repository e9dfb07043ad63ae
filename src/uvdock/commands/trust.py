"""`uvdock trust [--show | --revoke]`: let this repository's configuration choose where code runs.
The record goes to the user's own configuration folder, never the repository: no writer."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from uvdock.commands import base
from uvdock.config import settings as config_module
from uvdock.config import trust as config_trust
from uvdock.context import Context
from uvdock.files.edit import atomic_write, ensure_private_folder


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "A repository's uvdock.toml / [tool.uvdock] may set engine, engine-args, "
            "container, venv, uv-cache, container-uv-cache and enroot-output only once you "
            "trust it: read what it sets (--show), then run `uvdock trust`, which records "
            "the configuration's sha256 for this repository in "
            "$XDG_CONFIG_HOME/uvdock/trusted. Any change to it needs trust again."
        )
        base.add_switches(
            parser.add_mutually_exclusive_group(),
            show="show what the repository's configuration sets and whether you trust it",
            revoke="forget the trust given to this repository",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        repo = Path(os.path.realpath(ctx.repo))
        table, source = config_module.file_table(repo)
        records = config_trust.read_records_to_rewrite(ctx.env)
        keys = ctx.widening(config_trust.gated(table)) if source else {}
        sha = config_trust.digest(table)
        known = config_trust.find(records, repo, source) if source else None
        state = "nothing to trust" if not source or not keys else "not trusted"
        if known is not None and state != "nothing to trust":
            state = "trusted" if known.sha256 == sha else "changed since trusted"
        kept = config_trust.without(records, repo)
        changed = False
        if args.revoke and len(kept) != len(records):
            changed, state, verb = True, "revoked", "forgot the trust given to"
        elif not (args.revoke or args.show or state in ("trusted", "nothing to trust")):
            kept.append(config_trust.TrustRecord(str(repo), source, sha))
            changed, state, verb = True, "trusted", "trusted"
        if keys and state != "revoked" and not ctx.out.json_mode:
            ctx.out.info(
                f"{source} sets what changes where code runs or what the container can reach:"
            )
            for key, value in keys.items():
                ctx.out.info(f"  {key} = {value!r}")
        if changed:
            path = config_trust.trust_file(ctx.env)
            if ctx.dry_run:
                ctx.out.info(f"would write {path}")
            else:
                ensure_private_folder(path.parent)
                atomic_write(path, config_trust.render_records(kept))
                ctx.out.detail(f"{verb} this repository in {path}")
        if ctx.out.json_mode:
            changed = changed and not ctx.dry_run
            ctx.out.json(
                {"repo": str(repo), "source": source or None, "keys": keys, "state": state}
                | {"changed": changed}
            )
            return 0
        where = f"{source} in {repo}" if source else f"{repo} (no uvdock.toml or [tool.uvdock])"
        if ctx.options.dry_run and changed:
            ctx.out.info(f"would mark {where}: {state}")
            return 0
        ctx.out.info(f"{where}: {state}")
        if state in ("not trusted", "changed since trusted"):
            ctx.out.info("review it, then run `uvdock trust`")
        return 0
