"""`uvdock lock diff [BASE [HEAD]]`: packages added / removed / changed between two locks."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NamedTuple

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.lock.diff_view import add_lock_format_option, show_lock_diff
from uvdock.context import Context
from uvdock.errors import InputRefused
from uvdock.files import textlines
from uvdock.lock import lockfile

LOCK = "uv.lock"


def _read_path(path: Path) -> bytes | None:
    candidate = path / LOCK if path.is_dir() else path
    try:
        return textlines.read_bytes(candidate, textlines.LOCK_LIMIT) if candidate.exists() else None
    except OSError as exc:
        raise InputRefused(f"{candidate}: cannot read: {exc}") from exc


class Side(NamedTuple):
    label: str  # how the user named it: a path, REV, REV:PATH, "working tree"
    data: bytes | None  # None: no lock there (the project has none yet, or no longer)
    path: str  # the lock's path in the repository, or the file as given


def read_side(ctx: Context, spec: str | None, *, default_rev: str | None) -> Side:
    """A lock given as a path, a git revision (the project's lock at it) or REV:PATH;
    None: the working tree's, or `default_rev`'s."""
    from uvdock.run import git

    if spec is None and default_rev is None:
        return Side("working tree", _read_path(ctx.project / LOCK), ctx.project_file(LOCK))
    if spec is not None:
        if spec.startswith("-"):
            raise InputRefused(f"{spec}: neither a file nor a git revision (starts with '-')")
        path = ctx.user_path(spec)
        if path.exists():
            data = _read_path(path)
            if data is None:
                raise InputRefused(f"{spec}: no {LOCK} in that folder")
            return Side(spec, data, spec)
    rev, _, named = (spec if spec is not None else str(default_rev)).partition(":")
    where = _rev_path(ctx, named) if named else ctx.project_file(LOCK)
    rev = git.checked_ref(rev, "lock diff" if spec is not None else "base-ref (configuration)")
    if not git.rev_exists(ctx.repo, rev):
        what = "neither a file nor a git revision"
        if spec is None:
            what = f"does not exist ({ctx.base_ref_said()})"
        raise InputRefused(
            f"{rev}: {what}",
            hint=None if spec is not None else "fetch it, or name BASE: `uvdock lock diff BASE`",
        )
    return Side(spec or rev, git.show_file(ctx.repo, rev, where), where)


def _rev_path(ctx: Context, named: str) -> str:
    """REV:PATH's PATH as git reads it: from the repository root, or from the working
    directory when it starts with ./ or ../; a folder means its uv.lock."""
    path = named if named.endswith(".lock") else f"{named.rstrip('/')}/{LOCK}"
    if named.startswith(("./", "../")):
        path = ctx.rel(ctx.cwd / path)
    if path.startswith(("/", "../")) or path == "..":
        raise InputRefused(f"{named}: not a path inside the repository")
    return path


def _absent(ctx: Context, side: Side, counted: str) -> None:
    if side.data is None:
        ctx.out.info(f"{side.label} has no {side.path}: every package counts as {counted}")


def parse(side: Side) -> dict[str, frozenset[lockfile.Entry]]:
    """The packages of one side; none for a side without a lock."""
    label, data = side.label, side.data
    if data is None:
        return {}
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
            help="git revision, REV:PATH, or uv.lock path (default: the configured base-ref; "
            "unset, upstream/main when the clone has an `upstream` remote, else origin/main)",
        )
        parser.add_argument(
            "head",
            nargs="?",
            metavar="HEAD",
            help="git revision, REV:PATH, or uv.lock path (default: the working tree's uv.lock)",
        )
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        base_default = None
        if args.base is None:
            base_default = ctx.base_ref
            if ctx.is_fork:
                ctx.out.info(f"comparing with {ctx.base_ref_said()}")
        base = read_side(ctx, args.base, default_rev=base_default)
        head = read_side(ctx, args.head, default_rev=None)
        if base.data is None and head.data is None:
            raise InputRefused(f"neither {base.label} nor {head.label} has {base.path}")
        _absent(ctx, base, "added")
        _absent(ctx, head, "removed")
        diff = lockfile.diff_packages(parse(base), parse(head))
        lock = base.path if base.path == head.path else None
        title = f"{base.label} -> {head.label}"
        if lock is not None and lock != LOCK:  # a nested project's lock: say which
            title = f"{lock}: {title}"
        if ctx.out.json_mode:  # `lock`: null when the sides are different files
            ctx.out.json({"lock": lock, **diff.to_json()})
            return 0
        show_lock_diff(ctx.out, diff, title=title, fmt=args.format)
        return 0
