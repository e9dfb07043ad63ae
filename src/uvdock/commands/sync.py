"""`uvdock sync`: uv sync --locked in the container, from what the lane's Dockerfile syncs,
removing nothing unless --exact (and then only after showing what uv would remove)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import InputRefused

if TYPE_CHECKING:
    import argparse

    from uvdock.run.ci_container import CIContainer


class Command(base.Command):
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
        base.add_switches(
            parser,
            lts="explicit opt-in required by --profile lts",
            exact="also uninstall what the selection does not hold (listed first, from uv's "
            "own dry run); by default a sync removes nothing the image installed",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.project.syncplan import environment_plan
        from uvdock.run import uv_project

        if args.profile == "lts":
            from uvdock.cli import optin
            from uvdock.lts import requirements as lts

            again = optin.command_line(ctx, "sync", "--profile", "lts")
            optin.require_lts(args.lts, "sync --profile lts", again)
            name = ctx.config.lts_requirements  # what the profile installs last: there first
            lts.load(ctx.repo / name, name)
        plan = environment_plan(
            ctx.repo,
            ctx.project,
            ctx.config,
            ctx.out.warn,
            args.profile,
            groups=args.group,
            extras=args.extra,
            exact=args.exact,
        )
        from uvdock.run.ci_container import CIContainer

        shim = CIContainer.of(ctx)
        shim.srun.tasks = "every node"  # on Slurm: each node's container, in parallel
        _refuse_throwaway(ctx, shim, args)
        for note in plan.notes:
            ctx.out.warn(note)
        uv_project.report_uv(ctx, shim)
        if args.exact and not ctx.dry_run:
            uv_project.show_removals(ctx, shim, plan.uv_args)
        code = shim.run_uv(plan.uv_args)
        if code == 0 and args.profile == "lts":
            code = shim.run_uv(["pip", "install", "-r", ctx.config.lts_requirements])
        if ctx.dry_run:
            return 0
        if code != 0:
            raise uv_project.uv_failed(plan.uv_args, code)
        synced = f"environment synced ({args.profile} profile) {shim.placement.describe()}"
        for node in (shim.srun.nodes() if shim.placement.mode == "srun" else []) or [""]:
            ctx.out.info(f"{node}: {synced}" if node else synced)
        return 0


def _refuse_throwaway(ctx: Context, shim: CIContainer, args: argparse.Namespace) -> None:
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
    from uvdock.cli import optin

    # This sync's own arguments, for a suggestion that runs the same sync.
    words = ["sync"] + (["--profile", args.profile] if args.profile != "dev" else [])
    words += [w for group in args.group for w in ("--group", group)]
    words += [w for extra in args.extra for w in ("--extra", extra)]
    again = optin.command_line(ctx, *words, *["--exact"] * args.exact, *["--lts"] * args.lts)
    again[1:1] = ["--container", name]
    raise InputRefused(
        f"`uvdock sync` with only an image ({placement.image}) would install into a fresh "
        f"{placement.engine} container that is removed when uv exits; nothing was synced",
        hint=f"keep a container running and sync into it (--container NAME): "
        f"`{shlex.join(start)}`, then `{shlex.join(again)}`",
    )
