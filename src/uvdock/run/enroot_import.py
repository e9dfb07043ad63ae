"""enroot's import of an engine image to a .sqsh, on a machine with podman alone.

enroot's `podman://` import removes its temporary container with a hard-coded `docker rm`
(enroot 4.1.2), so enroot runs with a `docker` that is podman first on its PATH; and an
image without CMD/ENTRYPOINT, which enroot's `create` refuses, is imported through a derived
image that has one (removed after). The .sqsh is written beside the target and renamed over
it, so a re-import is a new file: the srun engine's reusable container, keyed by it, is never
served stale.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from uvdock.errors import CommandFailed, EnvironmentUnusable
from uvdock.image import build as imagebuild
from uvdock.run import proc, slurm


def import_sqsh(
    image: str,
    engine: str,
    target: Path,
    *,
    env: Mapping[str, str],
    cwd: Path,
    show: Callable[[str], None],
) -> None:
    """Import `engine`'s `image` to `target` (and record the tag it came from beside it)."""
    partial = target.with_name(target.name + ".part")
    partial.unlink(missing_ok=True)  # a cut-short import: enroot refuses to overwrite
    try:
        with (
            tempfile.TemporaryDirectory(prefix="uvdock-enroot-") as scratch,
            _with_cmd(engine, image, Path(scratch), env, cwd) as source,
        ):
            argv = imagebuild.enroot_argv(str(partial), source, engine)
            show("+ " + " ".join(argv))
            code = proc.run_foreground(argv, cwd=cwd, env=_enroot_env(engine, Path(scratch), env))
            if code != 0:
                raise CommandFailed(argv, code, message=f"enroot import exited with status {code}")
        if not partial.is_file():
            raise CommandFailed(argv, 0, message="enroot import wrote no file")
        # The tag record goes first, so a kill between the two never pairs a new .sqsh with
        # an old tag (srun then refuses the unrecorded file for a local tag: import again).
        slurm.source_file(target).unlink(missing_ok=True)
        os.replace(partial, target)
        from uvdock.files.edit import atomic_write

        atomic_write(slurm.source_file(target), image + "\n")
    finally:
        partial.unlink(missing_ok=True)


@contextlib.contextmanager
def _with_cmd(
    engine: str, image: str, scratch: Path, env: Mapping[str, str], cwd: Path
) -> Iterator[str]:
    """The image to import: `image`, or a derived one with a CMD (removed afterwards)."""
    found = proc.run([engine, "image", "inspect", image], env=env, check=False, timeout=60)
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
        built = proc.run([*build, str(scratch)], cwd=cwd, env=env, check=False)
        if not built.ok:
            raise CommandFailed(build, built.returncode, built.stdout, built.stderr)
        yield derived
    finally:
        from uvdock.run import signals

        with signals.held(reraise=False):
            proc.run([engine, "image", "rm", "--force", derived], env=env, check=False)


def _enroot_env(engine: str, scratch: Path, env: Mapping[str, str]) -> dict[str, str]:
    """enroot's environment: for podman, a `docker` that is podman first on PATH."""
    enroot_env = dict(env)
    if engine == "podman":
        podman = proc.which("podman", env)
        if podman:
            shims = scratch / "bin"
            shims.mkdir()
            (shims / "docker").symlink_to(podman)
            enroot_env["PATH"] = f"{shims}{os.pathsep}{enroot_env.get('PATH', os.defpath)}"
    return enroot_env
