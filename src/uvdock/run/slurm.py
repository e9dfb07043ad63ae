"""Slurm + pyxis + enroot: which image a step gets, the unpacked container it reuses, and
the checks that turn a bad setup into exit 3 before anything runs. pyxis reads an image as
a squashfs file only when the value starts with '/' or '.'; anything else is a registry
reference, and a bare local tag (`megatron-lm:local`) would be looked up on Docker Hub."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import CommandFailed, EnvironmentUnusable
from uvdock.run import proc, signals

if TYPE_CHECKING:
    from uvdock.config.settings import Config

SQUASHFS_MAGIC = b"hsqs"
NAME_PREFIX = "uvdock-"  # pyxis names the enroot container pyxis_<name>
PYXIS_PREFIX = "pyxis_"
_IMPORT_HINT = "write it with `uvdock image enroot`, or name a .sqsh with --image"


def is_local_tag(image: str) -> bool:
    """A tag only a local engine knows: no registry path (`megatron-lm:local`) or localhost/."""
    return ("/" not in image and "#" not in image) or image.startswith("localhost/")


def lts_output(enroot_output: str) -> str:
    """Where `image enroot --lts` writes the LTS image: enroot-output with `-lts` added."""
    path = Path(enroot_output)
    return str(path.with_name(f"{path.stem}-lts{path.suffix or '.sqsh'}"))


def step_image(
    image: str, *, repo: Path, enroot_output: str, lts_image: str = "", check: bool = True
) -> str:
    """What `--container-image` gets: an absolute .sqsh path, or a registry reference. A
    local tag means the local build, which reaches Slurm as the .sqsh `uvdock image enroot`
    wrote (enroot-output; for `lts_image`, `image enroot --lts`'s); without it: exit 3."""
    if image.startswith(("/", "./", "../", "~")) or image.endswith((".sqsh", ".squashfs")):
        path = Path(image).expanduser().absolute()
    elif is_local_tag(image):
        lts = bool(lts_image) and image == lts_image
        output = lts_output(enroot_output) if lts else enroot_output
        path = (repo / output).absolute()
        if check and not path.exists():
            raise EnvironmentUnusable(
                f"srun: {image} is a local image tag, which pyxis cannot read, and "
                f"{output} does not exist",
                hint=f"write it with `uvdock image enroot{' --lts' if lts else ''}`, or name "
                "a .sqsh with --image",
            )
        source = ""
        with contextlib.suppress(OSError, UnicodeDecodeError):
            source = source_file(path).read_text(encoding="utf-8").strip()
        if check and source and source != image:
            raise EnvironmentUnusable(
                f"srun: {output} holds {source}, not {image}",
                hint=f"import it with `uvdock --image {image} image enroot --output OTHER.sqsh`, "
                "then pass --image OTHER.sqsh",
            )
    else:
        return image
    if not check:
        return str(path)
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQUASHFS_MAGIC))
    except FileNotFoundError:
        raise EnvironmentUnusable(f"{path}: no such .sqsh file", hint=_IMPORT_HINT) from None
    except OSError as exc:
        raise EnvironmentUnusable(f"{path}: cannot read it ({exc.strerror})") from None
    if head != SQUASHFS_MAGIC:
        raise EnvironmentUnusable(
            f"{path} is not a squashfs image (not an enroot .sqsh)",
            hint="re-import it with `uvdock image enroot`",
        )
    return str(path)


def configured_image(cfg: Config, repo: Path, *, check: bool = True) -> str:
    out, lts = cfg.enroot_output, cfg.lts_image
    return step_image(cfg.image, repo=repo, enroot_output=out, lts_image=lts, check=check)


def source_file(sqsh: Path) -> Path:
    """Beside a .sqsh that `uvdock image enroot` wrote: the tag it was imported from."""
    return sqsh.with_name(sqsh.name + ".image")


def container_name(image: str, repo: Path, uid: int) -> str:
    """The reusable container for a .sqsh, keyed by the file's path, size, mtime and inode (a
    re-imported file gets a new name: a stale unpack is never served), the user and the
    checkout (`uvdock sync` writes into it: never shared by accident). "" for a registry
    reference (its tag may move: pyxis unpacks it each time)."""
    if not image.startswith("/"):
        return ""
    import hashlib

    try:
        st = os.stat(image)
    except OSError:
        return ""
    # The file's own path: a symlink to it (enroot-output pointing at a shared image) reuses it.
    key = f"{os.path.realpath(image)}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}"
    key += f"\0{uid}\0{os.path.realpath(repo)}"
    return NAME_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]


def option_value(extra_args: Sequence[str], short: str, long: str) -> str | None:
    """The value engine-args give an srun option (`-p X`, `-pX`, `--partition=X`, ...)."""
    for i, arg in enumerate(extra_args, 1):
        if arg in (short, long) and i < len(extra_args):
            return extra_args[i]
        if arg.startswith(long + "="):
            return arg.split("=", 1)[1]
        if arg.startswith(short) and len(arg) > 2 and not arg.startswith("--"):
            return arg[2:]
    return None


def partition_of(extra_args: Sequence[str], env: Mapping[str, str]) -> str:
    """The partition srun will be asked for: engine-args' -p/--partition, else SLURM_PARTITION."""
    return option_value(extra_args, "-p", "--partition") or env.get("SLURM_PARTITION", "")


def preflight(env: Mapping[str, str], extra_args: Sequence[str]) -> None:
    """Exit 3, naming cause and fix, unless pyxis is loaded, the controller answers and the
    partition exists. About 50 ms on the happy path (no job is started)."""
    helptext = proc.ask(["srun", "--help"], env)
    if "--container-image" not in helptext.stdout + helptext.stderr:
        raise EnvironmentUnusable(
            "srun has no --container-image: the pyxis plugin is not loaded",
            hint="load pyxis in Slurm's plugstack.conf (or ask the cluster admins), "
            "or choose --engine docker|podman",
        )
    ping = proc.ask(["scontrol", "ping"], env)
    if " is UP" not in ping.stdout:
        said = (ping.stdout + ping.stderr).strip().splitlines()
        raise EnvironmentUnusable(
            f"Slurm's controller is not answering (scontrol ping: {said[-1] if said else ping.returncode})",
            hint="start slurmctld, or check SLURM_CONF on this node; `uvdock doctor` checks",
        )
    partition = partition_of(extra_args, env)
    if partition and not sinfo_rows(env, partition, "%t"):
        raise EnvironmentUnusable(
            f"Slurm partition {partition!r} does not exist",
            hint="name one that `sinfo --summarize` lists in engine-args (-p NAME)",
        )


def sinfo_rows(
    env: Mapping[str, str], partition: str, fields: str, *flags: str
) -> list[tuple[str, str]]:
    """sinfo's (partition, `fields`) rows for `partition`, else for the default partition
    (the one sinfo marks with '*'); [] when sinfo fails."""
    argv = ["sinfo", "--noheader", *flags, f"--format=%P {fields}"]
    found = proc.ask([*argv, f"--partition={partition}"] if partition else argv, env)
    rows = (line.strip().partition(" ") for line in found.stdout.splitlines())
    chosen = [(p.rstrip("*"), rest.strip()) for p, _, rest in rows if partition or p.endswith("*")]
    return chosen if found.ok else []


def partition_gres(env: Mapping[str, str], extra_args: Sequence[str]) -> tuple[str, str | None]:
    """(partition, its generic resources as sinfo shows them: "(null)" for none); the
    allocation's partition inside one, else engine-args' or the default one. None when
    sinfo cannot say."""
    partition = env.get("SLURM_JOB_PARTITION", "") if env.get("SLURM_JOB_ID") else ""
    partition = partition_of(extra_args, env) or partition
    gres = sinfo_rows(env, partition, "%G")
    if not gres:
        return partition, None
    return gres[0][0], next((g for _, g in gres if "gpu" in g), gres[0][1])


def import_sqsh(
    image: str,
    engine: str,
    target: Path,
    *,
    env: Mapping[str, str],
    cwd: Path,
    show: Callable[[str], None],
) -> None:
    """Import `engine`'s `image` to `target` (and record the tag it came from beside it).
    enroot's `podman://` import removes its temporary container with a hard-coded `docker
    rm` (enroot 4.1.2), so enroot runs with a `docker` that is podman first on its PATH; an
    image without CMD/ENTRYPOINT, which enroot's `create` refuses, is imported through a
    derived image that has one. The .sqsh is written beside the target and renamed over
    it: a re-import is a new file, so the reusable container keyed by it is never stale."""
    import tempfile

    from uvdock.files.edit import atomic_write
    from uvdock.image import build as imagebuild

    found = proc.run([engine, "image", "inspect", image], env=env, check=False, timeout=60)
    if not found.ok:
        raise EnvironmentUnusable(
            f"image {image} is not present in {engine}",
            hint="build it with `uvdock image build` (or pull it), or name one with --image",
        )
    derived = ""
    if imagebuild.needs_cmd(found.stdout):
        derived = f"localhost/uvdock-enroot-{os.getpid()}-{os.urandom(3).hex()}:cmd"
    partial = target.with_name(target.name + ".part")
    partial.unlink(missing_ok=True)  # a cut-short import: enroot refuses to overwrite
    try:
        with tempfile.TemporaryDirectory(prefix="uvdock-enroot-") as tmp:
            scratch, enroot_env = Path(tmp), dict(env)
            if derived:
                _build_with_cmd(engine, image, derived, scratch, env=env, cwd=cwd)
            if engine == "podman" and (podman := proc.which("podman", env)):
                (scratch / "bin").mkdir()
                (scratch / "bin" / "docker").symlink_to(podman)
                path = env.get("PATH", os.defpath)
                enroot_env["PATH"] = f"{scratch / 'bin'}{os.pathsep}{path}"
            argv = imagebuild.enroot_argv(str(partial), derived or image, engine)
            show("+ " + " ".join(argv))
            code = proc.run_foreground(argv, cwd=cwd, env=enroot_env)
            if code != 0:
                raise CommandFailed(argv, code, message=f"enroot import exited with status {code}")
        if not partial.is_file():
            raise CommandFailed(argv, 0, message="enroot import wrote no file")
        # The tag record goes first, so a kill between the two never pairs a new .sqsh with
        # an old tag (srun then refuses the unrecorded file for a local tag: import again).
        source_file(target).unlink(missing_ok=True)
        os.replace(partial, target)
        atomic_write(source_file(target), image + "\n")
    finally:
        partial.unlink(missing_ok=True)
        if derived:
            with signals.held(reraise=False):
                proc.run([engine, "image", "rm", "--force", derived], env=env, check=False)


def _build_with_cmd(
    engine: str, image: str, derived: str, scratch: Path, *, env: Mapping[str, str], cwd: Path
) -> None:
    from uvdock.image import build as imagebuild

    containerfile = scratch / "Containerfile"
    containerfile.write_text(imagebuild.ENROOT_CMD_CONTAINERFILE.format(image=image))
    build = [engine, "build", "-q", "-t", derived, "-f", str(containerfile)]
    build += ["--pull=never"] if engine == "podman" else []
    built = proc.run([*build, str(scratch)], cwd=cwd, env=env, check=False)
    if not built.ok:
        raise CommandFailed(build, built.returncode, built.stdout, built.stderr)
