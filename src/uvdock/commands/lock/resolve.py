"""`uvdock lock resolve [--onto REF] [--no-fetch] [--abort]`: fix a uv.lock conflict safely.

The recipe: take REF's uv.lock (by name, so a rebase's swapped ours/theirs does not
matter), relock in the CI container, stage it. Started inside a nested uv project (its own pyproject.toml and uv.lock), the
same on that project's files (`infra/tool/uv.lock`), uv relocking there. Before anything
changes the lock's bytes
and all its index stages are saved under .git/uvdock/resolve-state/; any failure, Ctrl-C
or SIGTERM puts them back exactly, and `--abort` does the same after a hard kill.
An unmerged pyproject.toml is merged first (commands.pyproject_resolve), written and
staged inside the same guard, and saved and restored with the lock.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.base import shim_for
from uvdock.commands.lock import pyproject_resolve, resolve_base, resolve_keep, resolve_leftovers
from uvdock.commands.lock.diff_view import add_lock_format_option, show_lock_diff
from uvdock.context import Context
from uvdock.errors import (
    CheckFailed,
    EnvironmentUnusable,
    InputRefused,
    Interrupted,
    UvdockError,
)
from uvdock.files import state_store, textlines
from uvdock.files.edit import atomic_write_bytes
from uvdock.lock import branch_pins, lockfile, resolve_state
from uvdock.run import git, signals

if TYPE_CHECKING:
    from uvdock.run.ci_container import CIContainer

LOCK = "uv.lock"
PYPROJECT = "pyproject.toml"

NEXT_STEP = resolve_base.NEXT_STEP


def _read(path: Path) -> bytes | None:
    try:
        return textlines.read_bytes(path, textlines.LOCK_LIMIT)
    except FileNotFoundError:
        return None


class RepoIndex:
    """resolve_state's view of one repository's index and object store, through run.git."""

    def __init__(self, repo: Path) -> None:
        self.worktree = repo

    @cached_property
    def git_dir(self) -> Path:
        return git.git_dir(self.worktree)

    def stage_entries(self, path: str) -> list[resolve_state.IndexEntry]:
        return [
            resolve_state.IndexEntry(e.mode, e.sha, e.stage)
            for e in git.stage_entries(self.worktree, path)
        ]

    def blob_bytes(self, sha: str) -> bytes:
        return git.blob_bytes(self.worktree, sha)

    def unmerged_listing(self, path: str) -> str:
        return git.ls_files_unmerged_text(self.worktree, path)

    def has_object(self, sha: str) -> bool:
        return git.object_exists(self.worktree, sha)

    def store_blob(self, file: Path) -> None:
        git.hash_object_file(self.worktree, file)

    def set_entries(self, path: str, entries: Sequence[resolve_state.IndexEntry]) -> None:
        git.set_index_entries(
            self.worktree, path, [git.IndexEntry(e.mode, e.sha, e.stage, path) for e in entries]
        )


class Files(NamedTuple):
    """The project's two files as git names them: from the work tree's root `top`."""

    top: Path
    lock: str  # `uv.lock`, or `infra/tool/uv.lock` in a nested project
    pyproject: str

    @classmethod
    def of(cls, ctx: Context) -> Files:
        top = git.toplevel(ctx.repo)
        prefix = ctx.project.relative_to(top).as_posix()
        if prefix == ".":
            return cls(top, LOCK, PYPROJECT)
        return cls(top, f"{prefix}/{LOCK}", f"{prefix}/{PYPROJECT}")


def check_pyproject(files: Files) -> None:
    name = files.pyproject
    if git.unmerged_entries(files.top, name):
        raise InputRefused(
            f"{name} has a merge conflict too; resolve it first",
            hint=f"edit {name}, `git add {name}`, then run `uvdock lock resolve` again",
        )
    data = _read(files.top / name)
    if data is not None and lockfile.has_conflict_markers(data):
        lines = ", ".join(str(n) for n in lockfile.conflict_marker_lines(data)[:5])
        raise InputRefused(
            f"{name} holds conflict markers (line {lines}); resolve it first",
            hint="then run `uvdock lock resolve` again",
        )


def refuse_links_outside(files: Files) -> None:
    """A uv.lock that is a symlink out of the repository is refused before any state is
    saved: the relock could not write it, and a saved state that cannot be restored would
    block every later run."""
    from uvdock.files.edit import inside

    path = files.top / files.lock
    if path.is_symlink() and not inside(path, files.top):
        raise InputRefused(
            f"{files.lock} is a symlink to {os.path.realpath(path)}, outside the repository; "
            "nothing was changed",
            hint="replace the link with the file itself, then run `uvdock lock resolve`",
        )


def fetch_ref(ctx: Context, ref: str) -> None:
    remote = git.remote_of(ref, ctx.repo)
    if remote is None:
        ctx.out.detail(f"{ref} is not a remote-tracking ref; nothing to fetch")
        return
    branch = ref[len(remote) + 1 :]
    if not git.ref_name_ok(ctx.repo, f"refs/remotes/{ref}") or branch.startswith("+"):
        raise InputRefused(f"{ref}: not a valid branch of remote {remote}; nothing was fetched")
    if ctx.dry_run:
        ctx.out.command(["git", "fetch", "--quiet", remote, branch])
        return
    result = git.fetch(ctx.repo, remote, branch)
    if not result.ok:
        last = (result.stderr.strip().splitlines() or ["unknown error"])[-1]
        ctx.out.warn(f"could not fetch {remote} {branch} ({last}); using the local {ref}")


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--onto",
            metavar="REF",
            help="take this revision's uv.lock (default: the ref being merged in: MERGE_HEAD, "
            "the rebase's onto, HEAD for cherry-pick, revert and am; else the configured "
            "base-ref, origin/main)",
        )
        parser.add_argument(
            "--no-fetch", action="store_true", help="do not fetch REF's remote first"
        )
        parser.add_argument(
            "--abort",
            action="store_true",
            help="put uv.lock and its index entries back from the state an interrupted run saved",
        )
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        files = Files.of(ctx)
        if args.abort:
            return self._abort(ctx, files)
        # Refused before anything else sees them.
        onto, configured = resolve_base.checked_refs(ctx, args.onto)
        repo = files.top
        refuse_links_outside(files)
        index = RepoIndex(repo)
        if (leftover := state_store.load(index.git_dir)) is not None:
            # A killed run's uv may still be relocking: stop it before it writes uv.lock.
            resolve_leftovers.stop_started(ctx, leftover)
            raise InputRefused(
                "an earlier `uvdock lock resolve` did not finish (its saved state is in "
                f"{resolve_state.state_dir(index.git_dir)})",
                hint="run `uvdock lock resolve --abort` to put uv.lock back as it was, then again",
            )
        current = _read(repo / files.lock)
        unmerged = git.unmerged_entries(repo, files.lock)
        pyproject_unmerged = pyproject_resolve.is_unmerged(repo, files.pyproject)
        lock_conflict = unmerged or (current and lockfile.has_conflict_markers(current))
        if not lock_conflict and not pyproject_unmerged:
            if ctx.out.json_mode:
                ctx.out.json({"conflict": False, "lock": files.lock})
            else:
                ctx.out.info(f"{files.lock} has no conflict; nothing to do")
            return 0
        merge = None
        if pyproject_unmerged:
            merge = pyproject_resolve.merge_unmerged(ctx, repo, files.pyproject)
        else:
            check_pyproject(files)
        base = resolve_base.choose(ctx, onto, configured)
        if base.fetch and not args.no_fetch:
            fetch_ref(ctx, base.rev)
        ref = base.label
        ref_lock = self._ref_lock(files, base.rev, ref)

        shim = shim_for(ctx)
        shim.check_usable()
        operation = git.in_progress_operation(repo)
        pins = resolve_keep.candidates(ctx, index, operation, ref_lock, files.lock)
        if ctx.dry_run:
            return self._dry_run(ctx, files, index, shim, base, merge, pins)
        result, kept = self._relock(ctx, files, index, shim, ref, ref_lock, operation, merge, pins)
        try:
            self._report(ctx, files, base, ref_lock, result, operation, merge, kept, args.format)
        except KeyboardInterrupt:  # the work is done: say so, not a bare "interrupted"
            raise Interrupted(
                f"interrupted while reporting; {files.lock} is resolved on top of {ref} and staged"
            ) from None
        return 0

    def _dry_run(
        self,
        ctx: Context,
        files: Files,
        index: RepoIndex,
        shim: CIContainer,
        base: resolve_base.Base,
        merge: pyproject_resolve.PyprojectMerge | None,
        pins: list[branch_pins.Pin],
    ) -> int:
        sha = git.rev_parse(files.top, base.rev)[:12]
        folder = resolve_state.state_dir(index.git_dir)
        if merge is not None:
            pyproject_resolve.show_plan(ctx, merge)
        saved = f"{files.lock} and {files.pyproject}" if merge is not None else files.lock
        ctx.out.info(f"would save {saved} and their index entries to {folder}")
        ctx.out.info(f"would write {base.label}:{files.lock} ({sha}) to {files.lock}, then run:")
        shim.run_uv(["lock"], writes=(LOCK,))
        if pins:
            specs = ", ".join(p.spec() for p in pins)
            ctx.out.info(
                f"then keep what only this branch changed, if the relock moves it: {specs}"
            )
        ctx.out.command(["git", "add", "--", files.lock])
        if ctx.out.json_mode:
            pyproject = merge.report() if merge is not None else None
            ctx.out.json(
                {
                    "conflict": True,
                    "lock": files.lock,
                    "ref": base.label,
                    "ref_source": base.source,
                    "pyproject": pyproject,
                }
            )
        return 0

    def _ref_lock(self, files: Files, rev: str, ref: str) -> bytes:
        if not git.rev_exists(files.top, rev):
            raise InputRefused(
                f"{ref} does not exist", hint="fetch it, or name another with --onto REF"
            )
        data = git.show_file(files.top, rev, files.lock)
        if data is None:
            raise InputRefused(f"{ref} has no {files.lock}", hint="name another with --onto REF")
        if lockfile.has_conflict_markers(data):
            raise InputRefused(f"{ref}:{files.lock} itself holds conflict markers")
        return data

    def _relock(
        self,
        ctx: Context,
        files: Files,
        index: RepoIndex,
        shim: CIContainer,
        ref: str,
        ref_lock: bytes,
        operation: str | None,
        merge: pyproject_resolve.PyprojectMerge | None,
        pins: list[branch_pins.Pin],
    ) -> tuple[bytes, resolve_keep.Kept]:
        repo, lock = files.top, files.lock
        state = state_store.save(
            index,
            lock,
            ref=ref,
            operation=operation,
            also=(files.pyproject,) if merge is not None else (),
            started=resolve_leftovers.started(shim),
        )
        ctx.out.detail(f"saved {lock} and its index entries in {state.folder}")
        said = f"{lock}, {files.pyproject}" if merge is not None else lock
        with signals.interruptible():
            try:
                if merge is not None:
                    atomic_write_bytes(repo / files.pyproject, merge.merged)
                    git.add(repo, files.pyproject)
                    pyproject_resolve.show_taken(ctx, merge, operation)
                atomic_write_bytes(repo / lock, ref_lock)
                ctx.out.info(f"took {ref}'s {lock}; relocking {shim.placement.describe()}")
                shim.on_local_start = lambda pid: resolve_leftovers.note_group(index.git_dir, pid)
                code = shim.run_uv(["lock"], writes=(LOCK,))
                if code != 0:
                    from uvdock.commands.lock.relock_failure import relock_failed

                    raise relock_failed(shim, ref, said, code, lock, files.pyproject)
                kept = resolve_keep.keep(ctx, shim, repo / lock, pins)
                result = _read(repo / lock)
                if result is None or lockfile.has_conflict_markers(result):
                    raise CheckFailed(f"`uv lock` left no usable {lock}; restored the previous one")
                git.add(repo, lock)
            except BaseException as exc:
                self._restore_after(index, state)
                if isinstance(exc, KeyboardInterrupt | Interrupted):
                    raise Interrupted(
                        f"interrupted; {said} and their index entries are back as they were"
                    ) from None
                raise
        with signals.held(reraise=False):  # staged: the saved state must go whole
            state_store.discard(index.git_dir)
        return result, kept

    def _restore_after(self, index: RepoIndex, state: resolve_state.SavedState) -> None:
        try:
            with signals.held(reraise=False):  # a second Ctrl-C must not cut the restore
                state_store.restore(index, state)
        except (OSError, UvdockError) as exc:
            cause = exc.message if isinstance(exc, UvdockError) else str(exc)
            raise EnvironmentUnusable(
                f"could not restore {state.path} ({cause}); the saved state is kept in "
                f"{state.folder}",
                hint="fix the cause (space, permissions), then run `uvdock lock resolve --abort`",
            ) from None
        state_store.discard(index.git_dir)

    def _report(
        self,
        ctx: Context,
        files: Files,
        base: resolve_base.Base,
        ref_lock: bytes,
        result: bytes,
        operation: str | None,
        merge: pyproject_resolve.PyprojectMerge | None,
        kept: resolve_keep.Kept,
        fmt: str,
    ) -> None:
        diff = lockfile.diff_locks(ref_lock, result)
        others = [p for p in git.unmerged_paths(files.top) if p not in files[1:]]
        step = NEXT_STEP.get(operation or "", "git commit")
        ref = base.label
        if ctx.out.json_mode:
            ctx.out.json(
                {
                    "conflict": True,
                    "resolved": True,
                    "lock": files.lock,
                    "ref": ref,
                    "ref_source": base.source,
                    "commit": git.rev_parse(files.top, base.rev),
                    "operation": operation,
                    "other_conflicts": others,
                    "next_step": step,
                    "diff": diff.to_json(),
                    "pyproject": merge.report() if merge is not None else None,
                    "branch_only": kept.to_json(),
                }
            )
            return
        ctx.out.info(f"resolved {files.lock} on top of {ref} and staged it")
        show_lock_diff(ctx.out, diff, title=f"what this branch adds to {ref}", fmt=fmt)
        for line in kept.lines():
            (ctx.out.warn if line.startswith("could not") else ctx.out.info)(line)
        if others:
            ctx.out.info(f"still unmerged: {', '.join(others)}; resolve and `git add` them, then:")
        ctx.out.info(f"next: {step}")

    def _abort(self, ctx: Context, files: Files) -> int:
        index = RepoIndex(files.top)
        state = state_store.load(index.git_dir)
        if state is None:
            raise InputRefused("nothing to abort: no saved `uvdock lock resolve` state")
        if ctx.dry_run:
            ctx.out.info(
                f"would restore {state.path} and {len(state.entries)} index entries "
                f"from {state.folder}"
            )
            return 0
        resolve_leftovers.stop_started(ctx, state)
        with signals.held():
            state_store.restore(index, state)
            state_store.discard(index.git_dir)
        if ctx.out.json_mode:
            ctx.out.json({"restored": state.path, "stages": [e.stage for e in state.entries]})
        else:
            paths = " and ".join([state.path, *(s.path for s in state.also)])
            ctx.out.info(f"restored {paths} and their index entries as they were")
        return 0
