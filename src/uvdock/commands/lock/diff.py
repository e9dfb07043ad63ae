"""`uvdock lock diff [BASE [HEAD]]`: packages added / removed / changed between two locks."""

from __future__ import annotations

import argparse
from pathlib import Path

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.lock.diff_view import add_lock_format_option, show_lock_diff
from uvdock.context import Context
from uvdock.errors import InputRefused
from uvdock.lock import lockfile

LOCK = "uv.lock"


def _read_path(path: Path) -> bytes | None:
    candidate = path / LOCK if path.is_dir() else path
    try:
        return candidate.read_bytes() if candidate.is_file() else None
    except OSError as exc:
        raise InputRefused(f"{candidate}: cannot read: {exc}") from exc


def read_side(ctx: Context, spec: str | None, *, default_rev: str | None) -> tuple[str, bytes]:
    """A lock given as a path or a git revision (None: the working tree, or `default_rev`)."""
    from uvdock.run import git

    if spec is None and default_rev is None:
        data = _read_path(ctx.repo / LOCK)
        if data is None:
            raise InputRefused(f"{ctx.rel(ctx.repo / LOCK)} does not exist")
        return "working tree", data
    if spec is not None:
        if spec.startswith("-"):
            raise InputRefused(f"{spec}: neither a file nor a git revision (starts with '-')")
        path = ctx.user_path(spec)
        if path.exists():
            data = _read_path(path)
            if data is None:
                raise InputRefused(f"{spec}: no {LOCK} in that folder")
            return spec, data
    rev = git.checked_ref(
        spec if spec is not None else str(default_rev),
        "lock diff" if spec is not None else "base-ref (configuration)",
    )
    if not git.rev_exists(ctx.repo, rev):
        what = "neither a file nor a git revision" if spec is not None else "does not exist"
        raise InputRefused(
            f"{rev}: {what}",
            hint=None if spec is not None else "fetch it, or name BASE: `uvdock lock diff BASE`",
        )
    blob = git.show_file(ctx.repo, rev, LOCK)
    if blob is None:
        raise InputRefused(f"{rev} has no {LOCK}")
    return rev, blob


def parse(label: str, data: bytes) -> dict[str, frozenset[lockfile.Entry]]:
    if lockfile.has_conflict_markers(data):
        raise InputRefused(
            f"{label}: {LOCK} holds git conflict markers",
            hint="resolve it with `uvdock lock resolve`",
        )
    try:
        return lockfile.read_packages(data)
    except lockfile.LockfileError as exc:
        raise InputRefused(f"{label}: {exc}") from exc


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "base",
            nargs="?",
            metavar="BASE",
            help="git revision or uv.lock path (default: the configured base-ref; unset, "
            "upstream/main when the clone has an `upstream` remote, else origin/main)",
        )
        parser.add_argument(
            "head",
            nargs="?",
            metavar="HEAD",
            help="git revision or uv.lock path (default: the working tree's uv.lock)",
        )
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        base_default = None
        if args.base is None:
            base_default = ctx.base_ref
            if ctx.is_fork:
                ctx.out.info(f"comparing with {ctx.base_ref_said()}")
        base_label, base = read_side(ctx, args.base, default_rev=base_default)
        head_label, head = read_side(ctx, args.head, default_rev=None)
        diff = lockfile.diff_packages(parse(base_label, base), parse(head_label, head))
        show_lock_diff(ctx.out, diff, title=f"{base_label} -> {head_label}", fmt=args.format)
        return 0
