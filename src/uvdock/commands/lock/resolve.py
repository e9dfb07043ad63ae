"""`uvdock lock resolve [--onto REF] [--no-fetch] [--abort]`: the resolve transaction.

Take the lock of the ref being merged in (by name, so a rebase's swapped ours/theirs does not
matter), merge an unmerged pyproject.toml, relock in the CI container, ask again for what
only the branch changed, stage. Before anything changes, the files' bytes and index stages
are saved under .git/uvdock/resolve-state/ with what the relock starts; any failure, Ctrl-C
or SIGTERM puts them back exactly, and `--abort` does the same after a hard kill (stopping a
relock the killed run left). In a nested uv project, the same on that project's files.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, NamedTuple

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.base import add_lock_format_option
from uvdock.context import Context
from uvdock.errors import CheckFailed, EnvironmentUnusable, InputRefused, Interrupted, UvdockError
from uvdock.files import state_store, textlines
from uvdock.files.edit import atomic_write_bytes, inside
from uvdock.lock import lockfile
from uvdock.lock.branch_pins import Kept, Pin, branch_only, lost
from uvdock.merge.report import lines, report, sides
from uvdock.run import git, signals, stop
from uvdock.run.ci_container import CIContainer
from uvdock.ui.lock_diff import show_lock_diff

if TYPE_CHECKING:
    from uvdock.merge.pyproject import MergeResult

LOCK = "uv.lock"
PYPROJECT = "pyproject.toml"
# Per operation git stopped in: the command that finishes it, and the commit `lock resolve`
# takes the lock of (the side being merged in; cherry-pick, revert and am land on HEAD).
OPERATIONS = {
    "rebase": ("git rebase --continue", "the commit this rebase replays onto"),
    "merge": ("git commit", "the commit this merge brings in"),
    "am": ("git am --continue", "the commit `git am` applies onto"),
    "cherry-pick": ("git cherry-pick --continue", "the commit this cherry-pick applies onto"),
    "revert": ("git revert --continue", "the commit this revert applies onto"),
}


def _read(path: Path) -> bytes | None:
    try:
        return textlines.read_bytes(path, textlines.LOCK_LIMIT)
    except FileNotFoundError:
        return None


@dataclass
class RepoIndex:
    """The repository as `lock resolve` sees it: the work tree and git dir, and the project's
    two files as git names them (from the work tree's root; `infra/tool/uv.lock` when nested)."""

    worktree: Path
    lock: str = LOCK
    pyproject: str = PYPROJECT

    @classmethod
    def of(cls, ctx: Context) -> RepoIndex:
        top = git.toplevel(ctx.repo)
        folder = PurePosixPath(ctx.project.relative_to(top).as_posix())
        return cls(top, str(folder / LOCK), str(folder / PYPROJECT))

    @cached_property
    def git_dir(self) -> Path:
        return git.git_dir(self.worktree)


class Base(NamedTuple):
    rev: str  # what git reads: a ref the user named, or a commit id (the commit once checked)
    label: str  # what the user reads: a branch name when one points at it
    source: str  # --onto, base-ref (names worth fetching), MERGE_HEAD, rebase-merge/onto, HEAD


class PyprojectMerge(NamedTuple):
    text: str  # the merged file
    result: MergeResult
    texts: list[str]  # base, ours, theirs (index stages 1, 2, 3)


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
        index = RepoIndex.of(ctx)
        repo = index.worktree
        if args.abort:
            return _abort(ctx, index)
        configured = git.checked_ref(ctx.base_ref, "base-ref (configuration)")  # refused first
        onto = git.checked_ref(args.onto, "--onto") if args.onto is not None else None
        _refuse_to_start(ctx, index)
        marked = lockfile.has_conflict_markers(_read(repo / index.lock) or b"")
        # Each file's blob per index stage: 0 when clean, 1-3 (any() of them) when unmerged.
        lock_stages, pyproject_stages = (
            {e.stage: e.sha for e in git.index_entries(repo, p)}
            for p in (index.lock, index.pyproject)
        )
        if not (marked or any(pyproject_stages) or any(lock_stages)):
            if ctx.out.json_mode:
                ctx.out.json({"conflict": False, "lock": index.lock})
            else:
                ctx.out.info(f"{index.lock} has no conflict; nothing to do")
            return 0
        progress = git.in_progress(repo)
        operation = progress.operation if progress else None
        merge = None
        if any(pyproject_stages):
            merge = _merge_pyproject(ctx, index, pyproject_stages, sides(operation))
        elif lockfile.has_conflict_markers(data := _read(repo / index.pyproject) or b""):
            where = ", ".join(map(str, lockfile.conflict_marker_lines(data)[:5]))
            raise InputRefused(
                f"{index.pyproject} holds conflict markers (line {where}); resolve it first",
                hint="then run `uvdock lock resolve` again",
            )
        base = _choose_base(ctx, onto, configured, progress)
        if base.source in ("--onto", "base-ref") and not args.no_fetch:
            _fetch(ctx, base.rev)
        if (commit := git.verify_commit(repo, base.rev)) is None:
            raise InputRefused(
                f"{base.label} does not exist", hint="fetch it, or name another with --onto REF"
            )
        if (ref_lock := git.show_file(repo, commit, index.lock)) is None:
            raise InputRefused(
                f"{base.label} has no {index.lock}", hint="name another with --onto REF"
            )
        if lockfile.has_conflict_markers(ref_lock):
            raise InputRefused(f"{base.label}:{index.lock} itself holds conflict markers")
        base = base._replace(rev=commit)
        shim = CIContainer.of(ctx)
        shim.check_usable()
        pins = _branch_pins(ctx, index.lock, lock_stages, operation, ref_lock)
        resolution = Resolution(ctx, index, base, ref_lock, operation, merge, shim, pins)
        if ctx.dry_run:
            return resolution.dry_run()
        result, kept = resolution.relock()
        try:
            resolution.report(result, kept, args.format)
        except KeyboardInterrupt:  # the work is done: say so, not a bare "interrupted"
            raise Interrupted(
                f"interrupted while reporting; {index.lock} is resolved on top of "
                f"{base.label} and staged"
            ) from None
        return 0


@dataclass
class Resolution:  # one `lock resolve`, decided: what it builds on, merges and keeps
    ctx: Context
    index: RepoIndex
    base: Base
    ref_lock: bytes
    operation: str | None
    merge: PyprojectMerge | None
    shim: CIContainer
    pins: list[Pin]

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.index.lock, self.index.pyproject)[: 1 + (self.merge is not None)]

    def said(self) -> dict[str, Any]:
        return {
            "conflict": True,
            "lock": self.index.lock,
            "ref": self.base.label,
            "ref_source": self.base.source,
            "pyproject": report(self.merge.result) if self.merge is not None else None,
        }

    def dry_run(self) -> int:
        ctx, index, merge = self.ctx, self.index, self.merge
        if merge is not None:
            from uvdock.commands.merge_driver.pyproject import show_sides_diff

            ctx.out.info(f"would write the merged {index.pyproject}:")
            show_sides_diff(ctx, merge.texts, merge.text, index.pyproject)
            ctx.out.info("\n".join([*(f"  {line}" for line in lines(merge.result)), "then run:"]))
            ctx.out.command(["git", "add", "--", index.pyproject])
        folder = state_store.state_dir(index.git_dir)
        ctx.out.info(f"would save {' and '.join(self.paths)} and their index entries to {folder}")
        ctx.out.info(
            f"would write {self.base.label}:{index.lock} ({self.base.rev[:12]}) to {index.lock}, "
            "then run:"
        )
        self.shim.run_uv(["lock"], writes=(LOCK,))
        if specs := ", ".join(p.spec() for p in self.pins):
            ctx.out.info(
                f"then keep what only this branch changed, if the relock moves it: {specs}"
            )
        ctx.out.command(["git", "add", "--", index.lock])
        ctx.out.json(self.said())  # --json only
        return 0

    def relock(self) -> tuple[bytes, Kept]:
        ctx, index, shim, merge = self.ctx, self.index, self.shim, self.merge
        repo, lock, ref = index.worktree, index.lock, self.base.label
        saved = ", ".join(self.paths)
        started, also = _started(shim), self.paths[1:]
        state = state_store.save(
            index, lock, ref=ref, operation=self.operation, also=also, started=started
        )
        ctx.out.detail(f"saved {lock} and its index entries in {state.folder}")
        with signals.interruptible():
            try:
                if merge is not None:
                    atomic_write_bytes(repo / index.pyproject, merge.text.encode("utf-8"))
                    git.add(repo, index.pyproject)
                    said = f"merged {index.pyproject} ({sides(self.operation)}) and staged it:"
                    ctx.out.info("\n  ".join([said, *lines(merge.result)]))
                atomic_write_bytes(repo / lock, self.ref_lock)
                ctx.out.info(f"took {ref}'s {lock}; relocking {shim.placement.describe()}")
                # A local uv leads its own process group: recorded for `--abort`.
                shim.on_local_start = lambda pid: state_store.note_started(
                    index.git_dir, stop.group_identity(pid)
                )
                if (code := shim.run_uv(["lock"], writes=(LOCK,))) != 0:
                    raise _relock_failed(shim, ref, saved, code, index)
                kept = _keep(ctx, shim, repo / lock, self.pins)
                if (result := _read(repo / lock)) is None or lockfile.has_conflict_markers(result):
                    raise CheckFailed(f"`uv lock` left no usable {lock}; restored the previous one")
                git.add(repo, lock)
            except BaseException as exc:
                _restore_after(index, state)
                if isinstance(exc, KeyboardInterrupt | Interrupted):
                    raise Interrupted(
                        f"interrupted; {saved} and their index entries are back as they were"
                    ) from None
                raise
        with signals.held(reraise=False):  # staged: the saved state must go whole
            state_store.discard(index.git_dir)
        return result, kept

    def report(self, result: bytes, kept: Kept, fmt: str) -> None:
        ctx, index, ref = self.ctx, self.index, self.base.label
        diff = lockfile.diff_locks(self.ref_lock, result)
        unmerged = {e.path for e in git.index_entries(index.worktree, ".") if e.stage}
        others = sorted(unmerged - {index.lock, index.pyproject})
        step = OPERATIONS[self.operation][0] if self.operation else "git commit"
        if ctx.out.json_mode:
            ctx.out.json(
                {
                    **self.said(),
                    "resolved": True,
                    "commit": self.base.rev,
                    "operation": self.operation,
                    "other_conflicts": others,
                    "next_step": step,
                    "diff": diff.to_json(),
                    "branch_only": kept.to_json(),
                }
            )
            return
        ctx.out.info(f"resolved {index.lock} on top of {ref} and staged it")
        show_lock_diff(ctx.out, diff, title=f"what this branch adds to {ref}", fmt=fmt)
        for line in kept.lines():
            (ctx.out.warn if line.startswith("could not") else ctx.out.info)(line)
        if others:
            ctx.out.info(f"still unmerged: {', '.join(others)}; resolve and `git add` them, then:")
        ctx.out.info(f"next: {step}")


def _refuse_to_start(ctx: Context, index: RepoIndex) -> None:
    """Before any state is saved: a lock linked outside could be neither relocked nor
    restored, and an unfinished run's saved state would be overwritten."""
    if (link := index.worktree / index.lock).is_symlink() and not inside(link, index.worktree):
        raise InputRefused(
            f"{index.lock} is a symlink to {os.path.realpath(link)}, outside the repository; "
            "nothing was changed",
            hint="replace the link with the file itself, then run `uvdock lock resolve`",
        )
    if (leftover := state_store.load(index.git_dir)) is not None:
        _stop_started(ctx, leftover)  # a killed run's uv may still write uv.lock
        raise InputRefused(
            "an earlier `uvdock lock resolve` did not finish (its saved state is in "
            f"{state_store.state_dir(index.git_dir)})",
            hint="run `uvdock lock resolve --abort` to put uv.lock back as it was, then again",
        )


def _abort(ctx: Context, index: RepoIndex) -> int:
    if (state := state_store.load(index.git_dir)) is None:
        raise InputRefused("nothing to abort: no saved `uvdock lock resolve` state")
    if ctx.dry_run:
        ctx.out.info(
            f"would restore {state.path} and {len(state.entries)} index entries from {state.folder}"
        )
        return 0
    _stop_started(ctx, state)
    with signals.held():
        state_store.restore(index, state)
        state_store.discard(index.git_dir)
    if ctx.out.json_mode:
        ctx.out.json({"restored": state.path, "stages": [e.stage for e in state.entries]})
    else:
        paths = " and ".join([state.path, *(s.path for s in state.also)])
        ctx.out.info(f"restored {paths} and their index entries as they were")
    return 0


def _choose_base(
    ctx: Context, onto: str | None, configured: str, progress: git.InProgress | None
) -> Base:
    """--onto REF, else the ref being merged in, else the configured base-ref (said why).

    Relocking on any lock but the merged side's would move versions that side locked: a
    branch merging a local `main` ahead of `origin/main`, or a fork merging `upstream/main`.
    """
    if onto is not None:
        return Base(onto, onto, "--onto")
    if progress is None or progress.onto is None:
        why = "no merge, rebase, cherry-pick, revert or am in progress"
        if progress is not None:
            why = f"git left no record of what this {progress.operation} builds on"
        ctx.out.info(f"relocking on {configured} ({why}; {ctx.base_ref_said()})")
        return Base(configured, configured, "base-ref")
    label = (git.names_of(ctx.repo, progress.onto) or [progress.onto[:12]])[0]
    base = Base(progress.onto, label, progress.source)
    what = OPERATIONS[progress.operation][1]
    holds = "being merged in"
    if base.source == "HEAD":  # cherry-pick, revert, am: the change lands on HEAD
        holds = "already on the branch the change lands on"
    explained = f"{label} ({base.source}, {base.rev[:12]})"
    said = f"relocking on {explained}, {what}: its {LOCK} holds the versions {holds}"
    if "base_ref" not in ctx.layers.origins:  # nothing configured: nothing set aside
        ctx.out.info(said)
    elif (configured_commit := git.verify_commit(ctx.repo, configured)) == base.rev:
        ctx.out.detail(f"relocking on {explained}, {what} (also base-ref {configured})")
    elif configured_commit:
        ctx.out.info(
            f"{said}; the configured base-ref {configured} is another commit, so it is not "
            f"used (--onto {configured} takes it instead)"
        )
    else:
        ctx.out.info(f"{said}; the configured base-ref {configured} does not exist here")
    return base


def _fetch(ctx: Context, ref: str) -> None:
    if (remote := git.remote_of(ref, ctx.repo)) is None:
        ctx.out.detail(f"{ref} is not a remote-tracking ref; nothing to fetch")
        return
    branch = ref[len(remote) + 1 :]
    if not git.ref_name_ok(ctx.repo, f"refs/remotes/{ref}") or branch.startswith("+"):
        raise InputRefused(f"{ref}: not a valid branch of remote {remote}; nothing was fetched")
    if ctx.dry_run:
        ctx.out.command(["git", "fetch", "--quiet", remote, branch])
        return
    if not (result := git.fetch(ctx.repo, remote, branch)).ok:
        last = (result.stderr.strip().splitlines() or ["unknown error"])[-1]
        ctx.out.warn(f"could not fetch {remote} {branch} ({last}); using the local {ref}")


def _merge_pyproject(
    ctx: Context, index: RepoIndex, stages: dict[int, str], sides: str
) -> PyprojectMerge:
    """The three index stages of an unmerged pyproject.toml merged (git's own textual merge
    wherever it means the same); a real conflict, or a side that is not TOML, is refused
    with one line per conflict before anything is touched."""
    from uvdock.commands.merge_driver.pyproject import textual_merge
    from uvdock.merge.pyproject import merge_pyproject

    repo, path = index.worktree, index.pyproject
    if missing := ", ".join(str(n) for n in sorted({1, 2, 3} - set(stages))):
        raise InputRefused(
            f"{path} is unmerged without index stage {missing} (added or deleted on one "
            "side); uvdock merges only a file both sides changed",
            hint=f"resolve {path} by hand, `git add` it, then run `uvdock lock resolve` again",
        )
    texts: list[str] = []
    for stage in (1, 2, 3):
        try:
            blob = git.blob_bytes(
                repo, stages[stage], textlines.TEXT_LIMIT, f"{path} (index stage {stage})"
            )
            texts.append(blob.decode("utf-8"))
        except UnicodeDecodeError:
            raise InputRefused(f"{path} (index stage {stage}) is not UTF-8 text") from None
    try:
        with git.staged_texts(repo, texts) as copies:  # inside the git dir, not the work tree
            textual = textual_merge(copies[1], copies[0], copies[2])
    except OSError:
        textual = None  # no room in the git directory: the structured merge alone
    said = f"({sides}); nothing was changed"
    try:
        result = merge_pyproject(texts[0], texts[1], texts[2], textual)
    except ValueError as exc:
        raise InputRefused(
            f"{path}: {exc} {said}",
            hint=f"fix {path} by hand, `git add {path}`, then run `uvdock lock resolve`",
        ) from None
    if result.text is None:
        ctx.out.json({"conflict": True, "resolved": False, "pyproject": report(result)})
        conflicts = "".join(f"\n  {c.line()}" for c in result.conflicts)
        count = len(result.conflicts)
        raise InputRefused(
            f"{path}: {count} conflict{'s' if count > 1 else ''} uvdock will not decide "
            f"{said}:{conflicts}",
            hint=f"edit {path}, `git add {path}`, then run `uvdock lock resolve` again",
        )
    return PyprojectMerge(result.text, result, texts)


def _branch_pins(
    ctx: Context, lock: str, stages: dict[int, str], operation: str | None, ref_lock: bytes
) -> list[Pin]:
    """What only the branch changed, from the index stages of `lock`: the branch's own is
    ours in a merge, theirs when a rebase, cherry-pick, revert or am replays its commit."""
    branch = 2 if operation in ("merge", None) else 3
    if 1 not in stages or branch not in stages:
        ctx.out.detail(f"no base and branch versions of {lock} in the index to compare")
        return []
    try:
        base, mine = (
            git.blob_bytes(ctx.repo, stages[n], what=f"{lock} (index stage {n})")
            for n in (1, branch)
        )
        pins = branch_only(base, mine, ref_lock)
    except lockfile.LockfileError as exc:
        ctx.out.warn(f"could not compare the three versions of {lock} ({exc})")
        return []
    for pin in pins:
        ctx.out.detail(f"only this branch changed {pin.name} in {lock} (to {pin.version})")
    return pins


def _keep(ctx: Context, shim: CIContainer, lock: Path, pins: list[Pin]) -> Kept:
    """Ask again for the pins the relock moved away from: all at once, then one by one in
    name order when together they do not resolve."""
    moved = lost(pins, textlines.read_bytes(lock, textlines.LOCK_LIMIT))
    if not moved or _relock_with(ctx, shim, moved):
        return Kept(moved, [])
    kept = [pin for pin in moved if len(moved) > 1 and _relock_with(ctx, shim, [pin])]
    return Kept(kept, [p for p in moved if p not in kept])


def _relock_with(ctx: Context, shim: CIContainer, pins: list[Pin]) -> bool:
    upgrades = [word for pin in pins for word in ("--upgrade-package", pin.spec())]
    ctx.out.info(f"keeping what only this branch changed in {LOCK}: {', '.join(upgrades[1::2])}")
    return shim.run_uv(["lock", *upgrades], writes=(LOCK,)) == 0


def _restore_after(index: RepoIndex, state: state_store.SavedState) -> None:
    try:
        with signals.held(reraise=False):  # a second Ctrl-C must not cut the restore
            state_store.restore(index, state)
    except (OSError, UvdockError) as exc:
        cause = exc.message if isinstance(exc, UvdockError) else str(exc)
        raise EnvironmentUnusable(
            f"could not restore {state.path} ({cause}); the saved state is kept in {state.folder}",
            hint="fix the cause (space, permissions), then run `uvdock lock resolve --abort`",
        ) from None
    state_store.discard(index.git_dir)


def _relock_failed(
    shim: CIContainer, ref: str, saved: str, code: int, index: RepoIndex
) -> UvdockError:
    """uv's words went to the terminal. Asked once more, offline and without writing, uv
    tells the network (a failure an offline resolve gets past, or one naming being offline)
    from the project (one it repeats), as `lock --check` does."""
    from uvdock.commands.lock.lock import NOT_JUDGED
    from uvdock.project import lockcheck

    try:
        probe = shim.capture(shim.uv_argv(["lock", "--check", "--offline"]))
    except UvdockError:  # the question failed to run: say what was said before
        verdict = lockcheck.Verdict.FAILED
    else:
        verdict = lockcheck.classify(probe.returncode, f"{probe.stdout}\n{probe.stderr}").verdict
    failed = f"`uv lock` failed (exit {code}) on top of {ref}'s {index.lock}"
    back = f"{saved} and their index entries are back as they were"
    if verdict is lockcheck.Verdict.FAILED:
        return CheckFailed(
            f"{failed}; {back}",
            hint=f"fix what uv reports above (usually in {index.pyproject}), then run "
            "`uvdock lock resolve` again",
        )
    return EnvironmentUnusable(
        f"{failed} because uv could not reach the package index (uv's output is above); {back}",
        hint=f"{NOT_JUDGED}; then run `uvdock lock resolve` again",
    )


def _started(shim: CIContainer) -> dict[str, str]:
    """What an interrupted or killed relock may leave running, for `--abort`."""
    at, name = shim.placement, shim.container_name
    by_mode = {
        "srun": {"job": name},  # the step runs on under Slurm when uvdock is killed
        "exec": {"engine": at.engine, "container": at.container, "run_id": shim.run_id},
        "run": {"engine": at.engine, "container": name},
    }
    return {"mode": at.mode, **by_mode.get(at.mode, {})}


def _stop_started(ctx: Context, state: state_store.SavedState) -> None:
    """Stop what a killed run's relock left running, before anything is restored, so that a
    late uv can never write over the restored files."""
    started = dict(state.started)
    mode, engine, container = (started.get(k, "") for k in ("mode", "engine", "container"))
    problem = None
    if mode == "local" and started.get("pgid"):
        problem = stop.stop_group(started)
        said = f"no process of the relock's group {started['pgid']} runs any more"
    elif mode == "srun" and started.get("job"):
        from uvdock.run import slurm_containers

        slurm_containers.cancel_job(ctx.env, started["job"], wait=30.0)
        said = f"no Slurm job {started['job']} of the relock runs any more"
    elif engine and container:
        run_id = started.get("run_id", "")
        problem = (
            stop.stop_container(engine, container, ctx.env)
            if mode == "run"
            else stop.stop_tagged(engine, container, run_id, ctx.env)
        )
        said = f"stopped what the interrupted run started in {container}"
    else:
        return
    if problem:
        raise EnvironmentUnusable(problem, hint="stop it, then run `uvdock lock resolve --abort`")
    ctx.out.detail(said)
