"""Where a command runs: docker, podman, srun (Slurm + pyxis) or locally. Pure argv builders.

Nothing here starts a process or reads the filesystem except `inside_ci_container`, which
only looks at marker files and the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

CONTAINER_ENGINES = ("docker", "podman")


class Mounts(NamedTuple):
    repo: Path
    workdir: str
    cache: str | None  # host uv cache, or None to not mount one
    container_cache: str

    def volume_args(self) -> list[str]:
        args = ["-v", f"{self.repo}:{self.workdir}", "-w", self.workdir]
        if self.cache:
            args += ["-v", f"{self.cache}:{self.container_cache}"]
        return args

    def pyxis_mounts(self) -> str:
        mounts = [f"{self.repo}:{self.workdir}"]
        if self.cache:
            mounts.append(f"{self.cache}:{self.container_cache}")
        return ",".join(mounts)


class Placement(NamedTuple):
    """Where to run: mode is 'exec', 'run', 'srun' or 'local'."""

    mode: str
    engine: str = ""  # docker / podman / srun / ""
    container: str = ""
    image: str = ""
    extra_args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        if self.mode == "local":
            return "locally (already inside the CI container)"
        if self.mode == "exec":
            return f"in running container {self.container} ({self.engine} exec)"
        if self.mode == "srun":
            return f"on Slurm with pyxis, image {self.image}"
        return f"in a fresh {self.engine} container of {self.image}"


def _env_args(env: Sequence[tuple[str, str]]) -> list[str]:
    args: list[str] = []
    for key, value in env:
        args += ["-e", f"{key}={value}"]
    return args


def exec_argv(
    placement: Placement, command: Sequence[str], *, workdir: str, tty: bool
) -> list[str]:
    argv = [placement.engine, "exec", "-i"]
    if tty:
        argv.append("-t")
    argv += ["-w", workdir, *_env_args(placement.env), placement.container, *command]
    return argv


def run_argv(
    placement: Placement,
    command: Sequence[str],
    *,
    mounts: Mounts,
    tty: bool,
    name: str | None = None,
    gpus: bool = False,
) -> list[str]:
    argv = [placement.engine, "run", "--rm", "-i"]
    if tty:
        argv.append("-t")
    if name:
        argv += ["--name", name]
    if gpus:
        argv += ["--gpus", "all"]
    argv += mounts.volume_args()
    argv += _env_args(placement.env)
    argv += [*placement.extra_args, placement.image, *command]
    return argv


def srun_argv(
    placement: Placement,
    command: Sequence[str],
    *,
    mounts: Mounts,
    pty: bool,
    nodes: int | None = None,
    gpus_per_node: int | None = None,
) -> list[str]:
    argv = ["srun"]
    if nodes is not None:
        argv.append(f"--nodes={nodes}")
    if gpus_per_node is not None:
        argv.append(f"--gpus-per-node={gpus_per_node}")
    argv += [
        "--container-image",
        placement.image,
        "--container-mounts",
        mounts.pyxis_mounts(),
        "--container-workdir",
        mounts.workdir,
    ]
    if placement.env:
        # pyxis passes the caller's environment through; --export names what to add.
        argv.append("--export=ALL," + ",".join(f"{k}={v}" for k, v in placement.env))
    argv += list(placement.extra_args)
    if pty:
        argv.append("--pty")
    argv += list(command)
    return argv


def command_argv(
    placement: Placement,
    command: Sequence[str],
    *,
    mounts: Mounts,
    tty: bool,
    name: str | None = None,
) -> list[str]:
    """The argv that runs `command` at `placement` (uv work: never with GPUs)."""
    if placement.mode == "local":
        return list(command)
    if placement.mode == "exec":
        return exec_argv(placement, command, workdir=mounts.workdir, tty=tty)
    if placement.mode == "srun":
        return srun_argv(placement, command, mounts=mounts, pty=tty)
    return run_argv(placement, command, mounts=mounts, tty=tty, name=name)


def inside_ci_container(env: Mapping[str, str], venv: str) -> bool:
    """True when this process already runs in the CI image.

    Being in *some* container (a /.dockerenv alone) is not enough: CI sandboxes are
    containers too. The CI image sets IMAGE_TYPE and has the configured venv.
    """
    if env.get("IMAGE_TYPE"):
        return True
    in_container = os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")
    return in_container and os.path.isfile(os.path.join(venv, "bin", "python"))


def mounted_at(mounts: Sequence[Mapping[str, object]], workdir: str) -> str | None:
    """The host path that `docker inspect`'s Mounts place at `workdir`, if any."""
    best: tuple[int, str] | None = None
    target = workdir.rstrip("/") or "/"
    for mount in mounts:
        source = str(mount.get("Source", ""))
        dest = str(mount.get("Destination", "")).rstrip("/") or "/"
        if target == dest or dest == "/" or target.startswith(dest + "/"):
            rest = target[len(dest) :].lstrip("/")
            candidate = os.path.join(source, rest) if rest else source
            if best is None or len(dest) > best[0]:
                best = (len(dest), candidate)
    return best[1] if best else None
