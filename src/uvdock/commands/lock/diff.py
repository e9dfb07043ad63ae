"""`uvdock lock diff [BASE [HEAD]]`: packages added / removed / changed between two locks."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NamedTuple

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.base import add_lock_format_option
from uvdock.context import Context
from uvdock.errors import InputRefused
from uvdock.files import textlines
from uvdock.lock import lockfile
from uvdock.run import git
from uvdock.ui.lock_diff import show_lock_diff

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


def read_side(ctx: Context, spec: str) -> Side:
    """A lock given as a path, a git revision (the project's lock at it) or REV:PATH."""
    if spec.startswith("-"):
        raise InputRefused(f"{spec}: neither a file nor a git revision (starts with '-')")
    if (path := ctx.user_path(spec)).exists():
        if (data := _read_path(path)) is None:
            raise InputRefused(f"{spec}: no {LOCK} in that folder")
        return Side(spec, data, spec)
    rev, _, named = spec.partition(":")
    where = _rev_path(ctx, named) if named else ctx.project_file(LOCK)
    if not git.verify_commit(ctx.repo, git.checked_ref(rev, "lock diff")):
        raise InputRefused(f"{rev}: neither a file nor a git revision")
    return Side(spec, git.show_file(ctx.repo, rev, where), where)


def default_base(ctx: Context) -> Side:
    """What the branch changed: the lock where HEAD left the base-ref (their merge-base, as
    `git diff BASE...HEAD` reads it), so what the base-ref gained since is not a removal."""
    from uvdock.run import proc

    ref = git.checked_ref(ctx.base_ref, "base-ref (configuration)")
    if not git.verify_commit(ctx.repo, ref):
        raise InputRefused(
            f"{ref}: does not exist ({ctx.base_ref_said()})",
            hint="fetch it, or name BASE: `uvdock lock diff BASE`",
        )
    done = proc.run(["git", "-C", str(ctx.repo), "merge-base", "HEAD", ref], check=False)
    fork = done.stdout.strip() if done.ok else ""
    where = ctx.project_file(LOCK)
    if not fork:
        ctx.out.info(f"comparing with {ref}: HEAD and it share no commit ({ctx.base_ref_said()})")
        return Side(ref, git.show_file(ctx.repo, ref, where), where)
    ctx.out.info(
        f"comparing with {fork[:12]}, the merge-base of HEAD and {ref}: what this branch "
        f"changed ({ctx.base_ref_said()})"
    )
    return Side(f"merge-base of HEAD and {ref}", git.show_file(ctx.repo, fork, where), where)


def _rev_path(ctx: Context, named: str) -> str:
    """REV:PATH's PATH as git reads it: from the repository root, or from the working
    directory when it starts with ./ or ../; a folder means its uv.lock."""
    path = named if named.endswith(".lock") else f"{named.rstrip('/')}/{LOCK}"
    if named.startswith(("./", "../")):
        path = ctx.rel(ctx.cwd / path)
    if path.startswith(("/", "../")) or path == "..":
        raise InputRefused(f"{named}: not a path inside the repository")
    return path


def parse(ctx: Context, side: Side, counted: str) -> dict[str, frozenset[lockfile.Entry]]:
    if side.data is None:
        ctx.out.info(f"{side.label} has no {side.path}: every package counts as {counted}")
        return {}
    if lockfile.has_conflict_markers(side.data):
        raise InputRefused(
            f"{side.label}: {LOCK} holds git conflict markers",
            hint="resolve it with `uvdock lock resolve`",
        )
    try:
        return lockfile.read_packages(side.data)
    except lockfile.LockfileError as exc:
        raise InputRefused(f"{side.label}: {exc}") from exc


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "base",
            nargs="?",
            metavar="BASE",
            help="git revision, REV:PATH, or uv.lock path (default: where HEAD left the "
            "configured base-ref, their merge-base; unset, upstream/main when the clone has "
            "an `upstream` remote, else origin/main)",
        )
        parser.add_argument(
            "head",
            nargs="?",
            metavar="HEAD",
            help="git revision, REV:PATH, or uv.lock path (default: the working tree's uv.lock)",
        )
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        base = default_base(ctx) if args.base is None else read_side(ctx, args.base)
        if args.head is not None:
            head = read_side(ctx, args.head)
        else:
            head = Side("working tree", _read_path(ctx.project / LOCK), ctx.project_file(LOCK))
        if base.data is None and head.data is None:
            raise InputRefused(f"neither {base.label} nor {head.label} has {base.path}")
        diff = lockfile.diff_packages(parse(ctx, base, "added"), parse(ctx, head, "removed"))
        lock = base.path if base.path == head.path else None
        nested = f"{lock}: " if lock not in (None, LOCK) else ""  # a nested project's: say which
        title = f"{nested}{base.label} -> {head.label}"
        ctx.out.json({"lock": lock})  # --json only; null when the sides are different files
        show_lock_diff(ctx.out, diff, title=title, fmt=args.format)
        return 0
