"""uv on the project, in the CI container: which uv answers, the lock before and after, what
`uv add` / `uv remove` change and the sync after them, what `sync --exact` removes.

add and remove run uv with `--no-sync`: uv's own sync is exact and knows nothing of the image
(it would uninstall other groups and reinstall what the base image provides). A persistent
container is then synced the way `uvdock sync` does, inexact; a throwaway one not at all."""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Sequence

from uvdock.context import Context
from uvdock.errors import CommandFailed, InputRefused, Interrupted
from uvdock.files import textlines
from uvdock.run import proc
from uvdock.run.ci_container import CIContainer


def report_uv(ctx: Context, shim: CIContainer) -> None:
    """Say which uv runs, and warn when it differs from what is expected. In a run container
    the question rides along with the first uv run (one container start, not two)."""
    if ctx.dry_run:
        return
    if shim.placement.mode == "run":
        shim.on_uv_version = lambda answer: _uv_said(ctx, shim, answer)
        return
    out = shim.capture(["uv", "--version"])
    if out.returncode in (126, 127):
        raise shim.uv_missing()
    _uv_said(ctx, shim, out.stdout if out.ok else "")


def _uv_said(ctx: Context, shim: CIContainer, answer: str) -> None:
    """Which uv answered in the container, and how it differs from the project's and the host's."""
    from uvdock.project import pyproject, uvversion

    container = uvversion.parse(answer)
    if container is None:
        return
    ctx.out.info(f"uv {container}, {shim.placement.describe()}")
    required = pyproject.required_uv_version(ctx.project)
    out = proc.ask(["uv", "--version"], ctx.env) if proc.which("uv", ctx.env) else None
    host = uvversion.parse(out.stdout) if out and out.ok else None
    for problem in uvversion.mismatches(container, required, host):
        ctx.out.warn(problem)


def lock_bytes(ctx: Context) -> bytes | None:
    try:
        return textlines.read_bytes(ctx.project / "uv.lock", textlines.LOCK_LIMIT)
    except OSError:
        return None


def show_lock_change(ctx: Context, before: bytes | None, fmt: str = "text") -> None:
    """What the run changed in uv.lock, as a lock diff."""
    after = lock_bytes(ctx)
    if after is None or after == before:
        if ctx.options.json:
            ctx.out.json({"lock_changed": False, "added": [], "removed": [], "changed": []})
        else:
            ctx.out.info(f"{ctx.project_file('uv.lock')} unchanged")
        return
    if ctx.options.json:
        ctx.out.json({"lock_changed": True})
    from uvdock.lock import lockfile
    from uvdock.ui.lock_diff import show_lock_diff

    try:
        diff = lockfile.diff_locks(before or b"", after)  # no lock before: everything is added
        show_lock_diff(ctx.out, diff, title=f"{ctx.project_file('uv.lock')} changes", fmt=fmt)
    except KeyboardInterrupt:  # uv has finished: say what it left, not a bare "interrupted"
        raise Interrupted(
            "interrupted while showing the lock diff; uv.lock was changed by uv "
            "(see `git diff uv.lock`)"
        ) from None


def uv_failed(uv_args: Sequence[str], code: int) -> CommandFailed:
    """`uv X` exited non-zero in the container; uv has already said why on the terminal."""
    said = f"uv {uv_args[0]} failed (exit {code}); uv's output is above"
    return CommandFailed(["uv", *uv_args], code, message=said)


def change_dependencies(ctx: Context, action: str, args: argparse.Namespace) -> int:
    """`uvdock add` / `uvdock remove`: uv's verb on the project, the lock diff, the sync after
    it, and the commit to make. The shim is made once the arguments are checked."""
    from uvdock.project import dependency_args
    from uvdock.project.names import normalize_name

    group, optional = args.group, args.optional
    target_name = optional if optional is not None else group
    if target_name is not None and normalize_name(target_name) == "lts":
        # LTS is opt-in everywhere: neither add nor remove touches it, under any spelling.
        raise InputRefused(
            f"the lts extra is not edited with `uvdock {action}`: LTS pins live in "
            f"{ctx.config.lts_requirements}",
            hint="use `uvdock lts pin NAME==VERSION --lts`",
        )
    names = dependency_args.requirement_names(action, args.packages)
    target, note = dependency_args.target_args(ctx.project, action, group, optional)
    if note:
        ctx.out.info(note)
    uv_args = [action, "--no-sync", *target, *args.packages]
    shim = CIContainer.of(ctx)
    report_uv(ctx, shim)
    before = lock_bytes(ctx)
    code = shim.run_uv(uv_args, writes=("pyproject.toml", "uv.lock"))
    if code != 0 and not ctx.dry_run:
        raise uv_failed(uv_args, code)
    if not ctx.dry_run:
        show_lock_change(ctx, before, args.format)
    _sync_after(ctx, shim, action, target if action == "add" else [], sync=not args.no_sync)
    if ctx.dry_run or ctx.options.json:
        return 0
    message = f"build: {action} {', '.join(names)} dependency"
    ctx.out.info("next: commit the change")
    files = [os.path.relpath(ctx.project / f, ctx.cwd) for f in ("pyproject.toml", "uv.lock")]
    ctx.out.info(f"  git add {shlex.join(files) if ctx.project_path else 'pyproject.toml uv.lock'}")
    ctx.out.info("  " + shlex.join(["git", "commit", "-s", "-m", message]))
    return 0


def _sync_after(
    ctx: Context, shim: CIContainer, action: str, target: list[str], *, sync: bool
) -> None:
    """Bring a persistent environment up to date the way `uvdock sync` does; else say why not."""
    placement = shim.placement
    if not placement.outlives_command():
        ctx.out.info(
            f"not syncing: the {placement.engine} container uv ran in is removed when it exits "
            "(a running container, --container NAME, is brought up to date)"
        )
        return
    if not sync:
        ctx.out.info("not syncing (--no-sync); `uvdock sync` brings the environment up to date")
        return
    from uvdock.project.syncplan import environment_plan

    kind, name = target or ("", "")
    plan = environment_plan(
        ctx.repo,
        ctx.project,
        ctx.config,
        ctx.out.warn,
        groups=[name] if kind == "--group" else [],
        extras=[name] if kind == "--optional" else [],
        created=action == "add",
    )
    for note in plan.notes:
        ctx.out.warn(note)
    shim.srun.tasks = "every node"  # on Slurm: each node's container, in parallel
    if not ctx.dry_run:
        ctx.out.info(f"syncing the environment {placement.describe()} (inexact: removes nothing)")
    code = shim.run_uv(plan.uv_args)
    if code != 0 and not ctx.dry_run:
        raise CommandFailed(
            ["uv", *plan.uv_args],
            code,
            message=f"uv {action} succeeded (pyproject.toml and uv.lock are changed), but the "
            f"sync after it failed (exit {code}); uv's output is above",
        )
    if action == "remove" and not ctx.dry_run:
        ctx.out.info(
            "what is no longer needed stays installed (the sync is inexact); "
            "`uvdock sync --exact` removes it"
        )


def show_removals(ctx: Context, shim: CIContainer, uv_args: list[str]) -> None:
    """List what `sync --exact` will uninstall, in uv's own words (`uv sync --dry-run`)."""
    from uvdock.project import syncplan

    dry_args = shim.uv_argv([*uv_args, "--dry-run"])
    dry = shim.capture(dry_args)
    if not dry.ok:
        raise CommandFailed(
            dry_args,
            *dry[1:],  # its exit code and what it said
            message=f"uv's dry run of the --exact sync failed (exit {dry.returncode}); "
            "nothing was synced",
        )
    removed = syncplan.removals(dry.stdout + "\n" + dry.stderr)
    if not removed:
        ctx.out.info("--exact: uv would remove nothing")
        return
    ctx.out.warn(
        f"--exact: uv will uninstall {len(removed)} package(s) the selection does not hold:"
    )
    for line in removed:
        ctx.out.warn(f"  - {line}")
