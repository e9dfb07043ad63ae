"""`uvdock image enroot [--output FILE]`: import the CI image as a squashfs for enroot / pyxis.

Works where only podman is installed: enroot's `podman://` import removes its temporary
container with a hard-coded `docker rm` (enroot 4.1.2), so enroot runs with a `docker` that
is podman first on its PATH; and an image without CMD/ENTRYPOINT, which enroot's
`create` refuses, is imported through a derived image that has one (removed after). The
.sqsh is written beside the target and renamed over it, so a re-import is a new file:
the srun engine's reusable container, keyed by it, is never served stale.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand
from uvdock.errors import CommandFailed, EnvironmentUnusable

if TYPE_CHECKING:
    from uvdock.context import Context


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--output",
            metavar="FILE",
            help="the .sqsh to write (default: enroot-output; with --lts, its -lts twin)",
        )
        from uvdock.commands import optin

        optin.add_lts_flag(parser, "import the LTS image (lts-image) to enroot-output's -lts twin")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.image import build as imagebuild
        from uvdock.run import proc, slurm
        from uvdock.run.engines import operand

        cfg = ctx.config
        default = slurm.lts_output(cfg.enroot_output) if args.lts else cfg.enroot_output
        output = operand(args.output or default, "enroot output")
        image = operand(cfg.lts_image if args.lts else cfg.image, "image")
        if not ctx.dry_run and proc.which("enroot", ctx.env) is None:
            raise EnvironmentUnusable(
                "enroot is not installed or not on PATH",
                hint="run this where enroot is installed (a Slurm login node), "
                "or give srun --container-image the image directly",
            )
        engine = _answering_engine(ctx)
        if ctx.dry_run:
            ctx.out.command(imagebuild.enroot_argv(output, image, engine))
            return 0
        target = ctx.user_path(args.output) if args.output else ctx.repo / output
        partial = target.with_name(target.name + ".part")
        partial.unlink(missing_ok=True)  # a cut-short import: enroot refuses to overwrite
        try:
            with (
                tempfile.TemporaryDirectory(prefix="uvdock-enroot-") as scratch,
                _with_cmd(ctx, engine, image, Path(scratch)) as source,
            ):
                argv = imagebuild.enroot_argv(str(partial), source, engine)
                _import(ctx, argv, _enroot_env(ctx, engine, Path(scratch)))
            if not partial.is_file():
                raise CommandFailed(argv, 0, message="enroot import wrote no file")
            os.replace(partial, target)
            slurm.source_file(target).write_text(image + "\n", encoding="utf-8")
        finally:
            partial.unlink(missing_ok=True)
        ctx.out.info(f"wrote {ctx.rel(target)} from {engine}'s {image}; `--engine srun` uses it")
        return 0


def _import(ctx: Context, argv: list[str], env: dict[str, str]) -> None:
    from uvdock.run import proc

    ctx.out.detail("+ " + " ".join(argv))
    code = proc.run_foreground(argv, cwd=ctx.repo, env=env)
    if code != 0:
        raise CommandFailed(argv, code, message=f"enroot import exited with status {code}")


def _answering_engine(ctx: Context) -> str:
    """docker or podman, as the other commands choose; with engine auto, podman when the
    docker CLI is there but no daemon answers it."""
    from uvdock.commands.base import engine_for
    from uvdock.run import probe, proc

    engine = engine_for(ctx)
    if (
        ctx.config.engine == "auto"
        and engine == "docker"
        and not ctx.dry_run
        and proc.which("podman", ctx.env)
        and probe.image("docker", "uvdock-probe", ctx.env, timeout=30).unreachable
    ):
        return "podman"
    return engine


@contextlib.contextmanager
def _with_cmd(ctx: Context, engine: str, image: str, scratch: Path) -> Iterator[str]:
    """The image to import: `image`, or a derived one with a CMD (removed afterwards)."""
    from uvdock.image import build as imagebuild
    from uvdock.run import proc

    found = proc.run([engine, "image", "inspect", image], env=ctx.env, check=False, timeout=60)
    if not found.ok:
        raise EnvironmentUnusable(
            f"image {image} is not present in {engine}",
            hint="build it with `uvdock image build` (or pull it), or name one with --image",
        )
    if not imagebuild.needs_cmd(found.stdout):
        yield image
        return
    derived = f"localhost/uvdock-enroot-{os.getpid()}-{os.urandom(3).hex()}:cmd"
    (scratch / "Containerfile").write_text(imagebuild.ENROOT_CMD_CONTAINERFILE.format(image=image))
    build = [engine, "build", "-q", "-t", derived, "-f", str(scratch / "Containerfile")]
    if engine == "podman":
        build.append("--pull=never")
    try:
        built = proc.run([*build, str(scratch)], cwd=ctx.repo, env=ctx.env, check=False)
        if not built.ok:
            raise CommandFailed(build, built.returncode, built.stdout, built.stderr)
        yield derived
    finally:
        from uvdock import signals

        with signals.held(reraise=False):
            proc.run([engine, "image", "rm", "--force", derived], env=ctx.env, check=False)


def _enroot_env(ctx: Context, engine: str, scratch: Path) -> dict[str, str]:
    """enroot's environment: for podman, a `docker` that is podman first on PATH."""
    from uvdock.run import proc

    env = dict(ctx.env)
    if engine == "podman":
        podman = proc.which("podman", ctx.env)
        if podman:
            shims = scratch / "bin"
            shims.mkdir()
            (shims / "docker").symlink_to(podman)
            env["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', os.defpath)}"
    return env
