"""Slurm + pyxis + enroot: which image a step gets, the unpacked container it reuses, the
checks that turn a bad setup into exit 3 before anything runs, and what an interrupted
step leaves to clean up.

pyxis reads an image as a squashfs file only when the value starts with '/' or '.';
anything else is a registry reference it imports itself, and a bare local tag
(`megatron-lm:local`) would be looked up on Docker Hub.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import CommandFailed, EnvironmentUnusable
from uvdock.files import textlines
from uvdock.run import proc

if TYPE_CHECKING:
    from uvdock.config.settings import Config
    from uvdock.run.engines import Placement
    from uvdock.ui.output import Output

SQUASHFS_MAGIC = b"hsqs"
NAME_PREFIX = "uvdock-"  # pyxis names the enroot container pyxis_<name>
PYXIS_PREFIX = "pyxis_"
_READY_FILE = "srun-containers"  # in .git/uvdock: names whose unpack finished
_IMPORT_HINT = "write it with `uvdock image enroot`, or name a .sqsh with --image"


def is_path(image: str) -> bool:
    return image.startswith(("/", "./", "../", "~")) or image.endswith((".sqsh", ".squashfs"))


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
    """What `--container-image` gets: an absolute .sqsh path, or a registry reference.

    A local tag means the local build, which reaches Slurm as the .sqsh that `uvdock image
    enroot` wrote (enroot-output; for `lts_image`, the LTS lane's, from `image enroot
    --lts`); without that file it is refused (exit 3).
    """
    if is_path(image):
        path = Path(image).expanduser().absolute()
    elif is_local_tag(image):
        lts = bool(lts_image) and image == lts_image
        output = lts_output(enroot_output) if lts else enroot_output
        path = (repo / output).absolute()
        command = "uvdock image enroot" + (" --lts" if lts else "")
        if check and not path.exists():
            raise EnvironmentUnusable(
                f"srun: {image} is a local image tag, which pyxis cannot read, and "
                f"{output} does not exist",
                hint=f"write it with `{command}`, or name a .sqsh with --image",
            )
        source = imported_from(path)
        if check and source and source != image:
            raise EnvironmentUnusable(
                f"srun: {output} holds {source}, not {image}",
                hint=f"import it with `uvdock --image {image} image enroot --output OTHER.sqsh`, "
                "then pass --image OTHER.sqsh",
            )
    else:
        return image
    if check:
        check_squashfs(path)
    return str(path)


def configured_image(cfg: Config, repo: Path, *, check: bool = True) -> str:
    """step_image for the configured image (--image, or the local build's tag)."""
    return step_image(
        cfg.image,
        repo=repo,
        enroot_output=cfg.enroot_output,
        lts_image=cfg.lts_image,
        check=check,
    )


def source_file(sqsh: Path) -> Path:
    """Beside a .sqsh that `uvdock image enroot` wrote: the tag it was imported from."""
    return sqsh.with_name(sqsh.name + ".image")


def imported_from(sqsh: Path) -> str:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return source_file(sqsh).read_text(encoding="utf-8").strip()
    return ""


def check_squashfs(path: Path) -> None:
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


def container_name(image: str) -> str:
    """The reusable container for a .sqsh, keyed by its path, size, mtime and inode: a
    re-imported file gets a new name, so a stale unpack is never served. "" for a registry
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
    return NAME_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]


def partition_of(extra_args: Sequence[str], env: Mapping[str, str]) -> str:
    """The partition srun will be asked for: engine-args' -p/--partition, else SLURM_PARTITION."""
    args = list(extra_args)
    for i, arg in enumerate(args):
        if arg in ("-p", "--partition") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--partition="):
            return arg.split("=", 1)[1]
        if arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
            return arg[2:]
    return env.get("SLURM_PARTITION", "")


def _ask(argv: list[str], env: Mapping[str, str], timeout: float = 30) -> proc.Completed:
    try:
        return proc.run(argv, env=env, check=False, timeout=timeout)
    except CommandFailed as exc:
        return proc.Completed(argv, -1, "", exc.message)


def preflight(env: Mapping[str, str], extra_args: Sequence[str]) -> None:
    """Exit 3, naming cause and fix, unless pyxis is loaded, the controller answers and the
    partition exists. About 50 ms on the happy path (no job is started)."""
    helptext = _ask(["srun", "--help"], env)
    if "--container-image" not in helptext.stdout + helptext.stderr:
        raise EnvironmentUnusable(
            "srun has no --container-image: the pyxis plugin is not loaded",
            hint="load pyxis in Slurm's plugstack.conf (or ask the cluster admins), "
            "or choose --engine docker|podman",
        )
    ping = _ask(["scontrol", "ping"], env)
    if " is UP" not in ping.stdout:
        said = (ping.stdout + ping.stderr).strip().splitlines()
        raise EnvironmentUnusable(
            f"Slurm's controller is not answering (scontrol ping: {said[-1] if said else ping.returncode})",
            hint="start slurmctld, or check SLURM_CONF on this node; `uvdock doctor` checks",
        )
    partition = partition_of(extra_args, env)
    if partition:
        found = _ask(["sinfo", "--noheader", f"--partition={partition}", "--format=%P"], env)
        if not found.stdout.strip():
            raise EnvironmentUnusable(
                f"Slurm partition {partition!r} does not exist",
                hint="name one that `sinfo --summarize` lists in engine-args (-p NAME)",
            )


# -- the reusable containers ------------------------------------------------------------------


def _ready_path(git_dir: Path) -> Path:
    return git_dir / "uvdock" / _READY_FILE


def is_ready(git_dir: Path, name: str) -> bool:
    return name in ready_names(git_dir)


def mark_ready(git_dir: Path, names: Sequence[str]) -> None:
    """Record the names whose unpack finished (replaces the list)."""
    from uvdock.files.edit import atomic_write

    path = _ready_path(git_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, "".join(f"{n}\n" for n in sorted(set(names))))


def ready_names(git_dir: Path) -> list[str]:
    """The recorded names; none when the record is missing or damaged (not text): the
    containers are then unpacked again, not trusted."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return textlines.read_text(_ready_path(git_dir)).split()
    return []


def _enroot_step(extra_args: Sequence[str], *args: str) -> list[str]:
    # Run where pyxis unpacks (a compute node, as this user): enroot's data path is there.
    return ["srun", "--quiet", *extra_args, "--ntasks=1", "enroot", *args]


def list_containers(env: Mapping[str, str], extra_args: Sequence[str]) -> list[str]:
    """The reusable containers uvdock created (their pyxis names), on the node srun picks."""
    found = _ask(_enroot_step(extra_args, "list"), env, timeout=120)
    if not found.ok:
        last = (found.stderr.strip().splitlines() or [f"exit {found.returncode}"])[-1]
        raise EnvironmentUnusable(f"could not list enroot containers through srun: {last}")
    prefix = PYXIS_PREFIX + NAME_PREFIX
    return sorted(line.strip() for line in found.stdout.splitlines() if line.startswith(prefix))


def remove_containers(
    env: Mapping[str, str], extra_args: Sequence[str], pyxis_names: Sequence[str]
) -> str | None:
    """Remove unpacked containers; None when done, else a sentence saying what is left."""
    if not pyxis_names:
        return None
    done = _ask(_enroot_step(extra_args, "remove", "--force", *pyxis_names), env, timeout=120)
    if done.ok:
        return None
    return (
        f"could not remove {' '.join(pyxis_names)} ({(done.stderr.strip().splitlines() or ['?'])[-1]}); "
        f"remove with `srun enroot remove --force NAME` or `uvdock doctor --prune`"
    )


def cancel_job(env: Mapping[str, str], job_name: str, *, wait: float = 15.0) -> None:
    """scancel the job srun started (its tasks and pyxis's clean-up end with it), and wait
    until squeue no longer lists it, so nothing of it is left when uvdock exits."""
    import time

    _ask(["scancel", "--quiet", f"--name={job_name}"], env)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        listed = _ask(["squeue", "--noheader", f"--name={job_name}", "--format=%i"], env)
        if not listed.ok or not listed.stdout.strip():
            return
        time.sleep(0.2)


def unpack_once(
    placement: Placement,
    argv: list[str],
    git_dir: Path,
    foreground: Callable[[list[str]], int],
    out: Output,
    env: Mapping[str, str],
) -> None:
    """Unpack a .sqsh's reusable container in a step of its own (`argv` runs `true`), the
    first time: an unpack cut short (Ctrl-C, scancel, a failure) is removed, never reused
    half-written by the next step."""
    name = placement.container
    if not name or is_ready(git_dir, name):
        return
    out.info(f"unpacking {placement.image} once, for reuse as {name}")
    code = -1
    left: str | None = None
    try:
        code = foreground(argv)
        if code == 0:
            mark_ready(git_dir, [*ready_names(git_dir), name])
    finally:
        if code != 0:
            left = _remove_cut_short(argv, env, placement.extra_args, PYXIS_PREFIX + name)
    if code != 0:
        raise EnvironmentUnusable(
            f"pyxis could not start {placement.image} (srun exit {code}; its messages are above)"
            + (f"; {left}" if left else ""),
            hint="`uvdock doctor` checks the Slurm setup",
        )


def _remove_cut_short(
    argv: Sequence[str], env: Mapping[str, str], extra_args: Sequence[str], pyxis_name: str
) -> str | None:
    """Remove a half-written container once its step has ended: after an scancel, srun
    returns while the step's unsquashfs may still write for up to KillWait, and a removal
    before that end leaves a partial tree the next step would reuse."""
    from uvdock.run import signals

    with signals.held(reraise=False):  # a second Ctrl-C must not cut the removal
        job = next((a.split("=", 1)[1] for a in argv if a.startswith("--job-name=")), None)
        if job:
            cancel_job(env, job, wait=30.0)
        return remove_containers(env, extra_args, [pyxis_name])
