"""Which uv.lock `lock resolve` builds on: the lock of the ref being merged in.

A merge brings in MERGE_HEAD, a rebase replays onto its `onto` commit, cherry-pick, revert
and `git am` apply onto HEAD. Relocking on any other lock (the configured `base-ref`,
`origin/main` by default) would move versions the merged side had locked: a feature branch
merging a local `main` ahead of `origin/main`, or a fork merging `upstream/main`. `--onto
REF` overrides; the configured base-ref is used only when git records no such commit.
"""

from __future__ import annotations

from typing import NamedTuple

from uvdock.context import Context
from uvdock.run import git

NEXT_STEP = {
    "rebase": "git rebase --continue",
    "merge": "git commit",
    "am": "git am --continue",
    "cherry-pick": "git cherry-pick --continue",
    "revert": "git revert --continue",
}

_WHAT = {
    "merge": "the commit this merge brings in",
    "rebase": "the commit this rebase replays onto",
    "am": "the commit `git am` applies onto",
    "cherry-pick": "the commit this cherry-pick applies onto",
    "revert": "the commit this revert applies onto",
}


class Base(NamedTuple):
    rev: str  # what git reads: a ref the user named, or a commit id
    label: str  # what the user reads: a branch name when one points at it
    source: str  # --onto, base-ref, MERGE_HEAD, rebase-merge/onto, HEAD, ...
    fetch: bool  # a name that may be a remote-tracking ref, worth fetching first

    def explained(self) -> str:
        if self.source in ("--onto", "base-ref"):
            return self.label
        return f"{self.label} ({self.source}, {self.rev[:12]})"


def checked_refs(ctx: Context, onto: str | None) -> tuple[str | None, str]:
    """--onto and the configured base-ref, each refused unless it can only be a revision."""
    configured = git.checked_ref(ctx.base_ref, "base-ref (configuration)")
    return (git.checked_ref(onto, "--onto") if onto is not None else None), configured


def choose(ctx: Context, onto: str | None, configured: str) -> Base:
    """--onto REF, else the ref being merged in, else the configured base-ref (said why)."""
    if onto is not None:
        return Base(onto, onto, "--onto", fetch=True)
    progress = git.in_progress(ctx.repo)
    if progress is None or progress.onto is None:
        why = "no merge, rebase, cherry-pick, revert or am in progress"
        if progress is not None:
            why = f"git left no record of what this {progress.operation} builds on"
        ctx.out.info(f"relocking on {configured} ({why}; {ctx.base_ref_said()})")
        return Base(configured, configured, "base-ref", fetch=True)
    names = git.names_of(ctx.repo, progress.onto)
    label = names[0] if names else progress.onto[:12]
    base = Base(progress.onto, label, progress.source, fetch=False)
    _say_why(ctx, base, progress.operation, configured)
    return base


def _say_why(ctx: Context, base: Base, operation: str, configured: str) -> None:
    what = _WHAT.get(operation, "the commit being merged in")
    holds = "being merged in"
    if base.source == "HEAD":  # cherry-pick, revert, am: the change lands on HEAD
        holds = "already on the branch the change lands on"
    said = f"relocking on {base.explained()}, {what}: its {_LOCK} holds the versions {holds}"
    if "base_ref" not in ctx.layers.origins:  # nothing configured: nothing set aside
        ctx.out.info(said)
        return
    configured_commit = git.verify_commit(ctx.repo, configured)
    if configured_commit == base.rev:
        ctx.out.detail(f"relocking on {base.explained()}, {what} (also base-ref {configured})")
        return
    if configured_commit:
        why = f"is another commit, so it is not used (--onto {configured} takes it instead)"
    else:
        why = "does not exist here"
    ctx.out.info(f"{said}; the configured base-ref {configured} {why}")


_LOCK = "uv.lock"
