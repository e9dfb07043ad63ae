"""`uvdock sync [--profile NAME] [--group G]... [--extra X]... [--lts] [--exact]`: uv sync
--locked in the container, starting from what the lane's Dockerfile syncs, removing nothing
unless --exact (and then only after showing what uv says it would remove)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand
from uvdock.context import Context
from uvdock.errors import InputRefused
from uvdock.files import textlines

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from uvdock.project.dockerfile_sync import SyncSelection
    from uvdock.project.syncplan import SyncPlan
    from uvdock.run.shim import Shim


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--profile",
            default="dev",
            choices=("dev", "lint", "lts"),
            help="what to install (default: dev)",
        )
        parser.add_argument(
            "--group", action="append", default=[], metavar="G", help="also this dependency group"
        )
        parser.add_argument(
            "--extra", action="append", default=[], metavar="X", help="also this extra"
        )
        parser.add_argument(
            "--lts", action="store_true", help="explicit opt-in required by --profile lts"
        )
        parser.add_argument(
            "--exact",
            action="store_true",
            help="also uninstall what the selection does not hold (listed first, from uv's "
            "own dry run); by default a sync removes nothing the image installed",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.commands import uvwork
        from uvdock.commands.base import shim_for

        if args.profile == "lts":
            from uvdock.commands import optin

            optin.require_lts(
                args.lts, "sync --profile lts", optin.command_line(ctx, "sync", "--profile", "lts")
            )
            from uvdock.lts import requirements as lts

            name = ctx.config.lts_requirements  # what the profile installs last: there first
            lts.load(lts.requirements_path(ctx.repo, name), name)
        plan = environment_plan(
            ctx, args.profile, groups=args.group, extras=args.extra, exact=args.exact
        )
        shim = shim_for(ctx)
        shim.srun.tasks = "every node"  # on Slurm: each node's container, in parallel
        refuse_throwaway(ctx, shim, _words(args))
        for note in plan.notes:
            ctx.out.warn(note)
        uvwork.report_uv(ctx, shim)
        if args.exact and not ctx.dry_run:
            _show_removals(ctx, shim, plan.uv_args)
        code = shim.run_uv(plan.uv_args)
        if code == 0 and args.profile == "lts":
            requirements = ctx.config.lts_requirements
            code = shim.run_uv(["pip", "install", "-r", requirements])
        if ctx.dry_run:
            return 0
        if code != 0:
            raise uvwork.uv_failed(plan.uv_args, code)
        synced = f"environment synced ({args.profile} profile) {shim.placement.describe()}"
        nodes = shim.srun.nodes() if shim.placement.mode == "srun" else []
        for node in nodes:
            ctx.out.info(f"{node}: {synced}")
        if not nodes:
            ctx.out.info(synced)
        return 0


def environment_plan(
    ctx: Context,
    profile: str = "dev",
    *,
    groups: Sequence[str] = (),
    extras: Sequence[str] = (),
    exact: bool = False,
    created: bool = False,
) -> SyncPlan:
    """The sync `uvdock sync` runs: the lane Dockerfile's selection plus the profile's,
    inexact unless `exact`, never reinstalling what the base image provides.
    `created`: the step before (`uv add`, not run in a dry run) creates `groups` and
    `extras`, so they count as declared."""
    from uvdock.project import pyproject, syncplan

    deps = pyproject.read(ctx.project)
    if created:
        deps = deps.declaring(groups=groups, extras=extras)
    protected = pyproject.protected_packages(
        ctx.repo / _lane_dockerfile(ctx, profile), ctx.config.protected_packages
    )
    return syncplan.build(
        profile,
        deps,
        groups=groups,
        extras=extras,
        protected=protected,
        image=_image_selection(ctx, profile),
        exact=exact,
    )


def _words(args: argparse.Namespace) -> list[str]:
    """This sync's own arguments, for a suggestion that runs the same sync."""
    words = ["sync"] + (["--profile", args.profile] if args.profile != "dev" else [])
    words += [w for group in args.group or () for w in ("--group", group)]
    words += [w for extra in args.extra or () for w in ("--extra", extra)]
    return words + ["--exact"] * args.exact + ["--lts"] * args.lts


def refuse_throwaway(ctx: Context, shim: Shim, words: Sequence[str] = ("sync",)) -> None:
    """A sync into a container removed when uv exits (run placement, --rm; an srun step's
    unnamed pyxis container) is lost at once."""
    placement = shim.placement
    if placement.outlives_command():
        return
    if placement.mode == "srun":
        raise InputRefused(
            f"`uvdock sync` on Slurm with a registry image ({placement.image}) would install "
            "into a pyxis container that is removed when the step ends; nothing was synced",
            hint="import it as a .sqsh (`uvdock image enroot`), whose unpacked container uvdock "
            'keeps per node, or name a pyxis container (engine-args = ["--container-name=NAME"])',
        )
    # uvdock is not in the container: the way that works is a container that stays.
    import re
    import shlex

    name = re.sub(r"[^A-Za-z0-9_.-]", "-", ctx.repo.name).lstrip("-_.") + "-dev"
    workdir = ctx.config.workdir
    start = [placement.engine, "run", "-d", "--name", name, *placement.extra_args]
    start += ["-v", f"{ctx.repo}:{workdir}", "-w", workdir, placement.image, "sleep", "infinity"]
    from uvdock.commands import optin

    again = optin.command_line(ctx, *words)
    again[1:1] = ["--container", name]
    raise InputRefused(
        f"`uvdock sync` with only an image ({placement.image}) would install into a fresh "
        f"{placement.engine} container that is removed when uv exits; nothing was synced",
        hint=f"keep a container running and sync into it (--container NAME): "
        f"`{shlex.join(start)}`, then `{shlex.join(again)}`",
    )


def _lane_dockerfile(ctx: Context, profile: str) -> str:
    if profile != "lts":
        return ctx.config.dockerfile
    # Megatron-LM early 2026 had no LTS Dockerfile: its LTS rows built the dev one with
    # IMAGE_TYPE=lts, so that file (when it reads IMAGE_TYPE) holds the LTS selection.
    if not textlines.regular_file(ctx.repo / ctx.config.lts_dockerfile):
        try:
            dev_text = textlines.read_text(ctx.repo / ctx.config.dockerfile, newlines=True)
        except OSError:
            dev_text = ""
        if "IMAGE_TYPE" in dev_text:
            return ctx.config.dockerfile
    return ctx.config.lts_dockerfile


def _image_selection(ctx: Context, profile: str) -> SyncSelection | None:
    """What the lane's Dockerfile syncs into the image, for this machine's platform."""
    if profile == "lint":
        return None
    import platform

    from uvdock.project import dockerfile_sync

    lts = profile == "lts"
    path = ctx.repo / _lane_dockerfile(ctx, profile)
    try:
        text = textlines.read_text(path, newlines=True)
    except OSError:
        ctx.out.warn(
            f"{path.relative_to(ctx.repo)} not readable: the image's own selection is not known"
        )
        return None
    machine = platform.machine().lower()
    selection = dockerfile_sync.read_selection(
        text,
        image_type="lts" if lts else "dev",
        platform={"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine),
    )
    if not selection.found:
        ctx.out.warn(
            f"no `uv sync` line in {path.relative_to(ctx.repo)}: the profile's own selection only"
        )
        return None
    return selection


def _show_removals(ctx: Context, shim: Shim, uv_args: list[str]) -> None:
    """List what `--exact` will uninstall, in uv's own words (`uv sync --dry-run`)."""
    from uvdock.errors import CommandFailed
    from uvdock.project import syncplan

    dry_args = shim.uv_argv([*uv_args, "--dry-run"])
    dry = shim.capture(dry_args)
    if not dry.ok:
        raise CommandFailed(
            dry_args,
            dry.returncode,
            dry.stdout,
            dry.stderr,
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
