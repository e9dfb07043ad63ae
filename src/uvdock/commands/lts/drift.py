"""`uvdock lts drift`: which packages the LTS pins hold back against uv.lock, and by how much."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NamedTuple

from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.files import textlines
from uvdock.lts import requirements as lts


class LockSource(NamedTuple):
    text: str
    description: str  # e.g. "origin/main:uv.lock" or "uv.lock (working tree)"


def read_lock_source(
    repo: Path,
    base_ref: str,
    *,
    lock_path: Path | None = None,
    working_tree: bool = False,
    named: bool = False,
) -> LockSource:
    """The uv.lock to compare with: --lock PATH, the working tree, or base_ref's (default). A
    missing default base-ref falls back to the working tree; a `named` --base is refused."""
    limit = textlines.LOCK_LIMIT
    if lock_path is not None:
        if not textlines.regular_file(lock_path, limit):
            raise InputRefused(f"--lock {lock_path}: no such file")
        return LockSource(textlines.read_text(lock_path, limit, newlines=True), str(lock_path))
    from uvdock.run import git

    if not working_tree and git.verify_commit(repo, base_ref):
        data = git.show_file(repo, base_ref, "uv.lock")
        if data is not None:
            return LockSource(data.decode("utf-8", errors="replace"), f"{base_ref}:uv.lock")
        if named:
            raise InputRefused(f"--base {base_ref}: the revision has no uv.lock")
    elif not working_tree and named:
        raise InputRefused(f"--base {base_ref}: no such revision")
    if (repo / "uv.lock").exists():
        text = textlines.read_text(repo / "uv.lock", limit, newlines=True)
        return LockSource(text, "uv.lock (working tree)")
    where = "the working tree" if working_tree else f"{base_ref} or the working tree"
    raise EnvironmentUnusable(f"no uv.lock in {where}")


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        source = parser.add_mutually_exclusive_group().add_argument  # one lock to compare with
        source("--base", metavar="REF", help="compare with REF's uv.lock (default: base-ref)")
        tree = "compare with the working tree's uv.lock"
        source("--working-tree", action="store_true", help=tree)
        source("--lock", metavar="PATH", type=Path, help="compare with this uv.lock file")
        parser.add_argument("--all", action="store_true", help="list pins that match the lock too")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.lts import drift as lts_drift
        from uvdock.run import git

        path = ctx.repo / ctx.config.lts_requirements
        display = ctx.rel(path)
        pin_set = lts.load(path, display)
        named = args.base is not None
        said = (args.base, "--base") if named else (ctx.base_ref, "base-ref (configuration)")
        base = git.checked_ref(*said)
        lock_path = None if args.lock is None else ctx.user_path(args.lock)
        source = read_lock_source(
            ctx.repo, base, lock_path=lock_path, working_tree=args.working_tree, named=named
        )
        drifts = lts_drift.compare(pin_set.pins, lts_drift.locked_packages(*source))
        shown = drifts if args.all else [d for d in drifts if d.status != "same"]
        if ctx.options.json:
            listed = [d._asdict() for d in shown]
            ctx.out.json({"path": display, "lock": source.description, "drift": listed})
            return 0
        ctx.out.info(f"comparing {display} with {source.description}")
        if shown:
            rows = [(d.name, d.lts, d.lock or "-", d.detail) for d in shown]
            ctx.out.table(("name", "LTS", "uv.lock", "LTS is"), rows)
        same = sum(d.status == "same" for d in drifts)
        behind = sum(d.status == "behind" for d in drifts)
        other = len(drifts) - same - behind
        ctx.out.info(f"{behind} held back, {other} otherwise different, {same} the same")
        return 0
