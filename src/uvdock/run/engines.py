"""Where a command runs: docker, podman, srun (Slurm + pyxis) or locally. Pure argv builders:
nothing here starts a process; only `inside_ci_container` looks at marker files."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import EnvironmentUnusable, InputRefused

CONTAINER_ENGINES = ("docker", "podman")


class Mounts(NamedTuple):
    repo: Path
    workdir: str
    cache: str | None  # host uv cache, or None to not mount one
    container_cache: str

    def volume_args(self) -> list[str]:
        cache = ["-v", f"{self.cache}:{self.container_cache}"] if self.cache else []
        return ["-v", f"{self.repo}:{self.workdir}", "-w", self.workdir, *cache]

    def pyxis_mounts(self) -> str:
        cache = [f"{self.cache}:{self.container_cache}"] if self.cache else []
        return ",".join([f"{self.repo}:{self.workdir}", *cache])


class Placement(NamedTuple):
    """Where to run: mode is 'exec', 'run', 'srun' or 'local'."""

    mode: str
    engine: str = ""  # docker / podman / srun / ""
    container: str = ""
    image: str = ""
    extra_args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    by_hand: bool = False  # local: engine local was configured, not detected
    said: str = ""  # that setting as the user should read it: who chose it
    init: str = ""  # run: the host's catatonit, mounted as the command's init (run_argv)

    def outlives_command(self) -> bool:
        """Whether what uv installs here is still there afterwards: a running container, this
        machine, or a named pyxis container (`--container-name` in engine-args), which later
        steps of the same Slurm allocation reuse; a run or unnamed srun container is not."""
        if self.mode == "srun":
            named = (arg.partition("=")[0] == "--container-name" for arg in self.extra_args)
            return bool(self.container) or any(named)
        return self.mode != "run"

    def describe(self) -> str:
        by_hand = f"locally with the uv on PATH ({self.said or '--engine local'})"
        return {
            "local": by_hand if self.by_hand else "locally (already inside the CI container)",
            "exec": f"in running container {self.container} ({self.engine} exec)",
            "srun": f"on Slurm with pyxis, image {self.image}",
        }.get(self.mode, f"in a fresh {self.engine} container of {self.image}")


def operand(value: str, what: str) -> str:
    """`value` where an engine expects a name, refused when it would read as an option."""
    if not value or value.startswith("-"):
        raise InputRefused(
            f"{what} {value!r} is not a name: it would be read as an option",
            hint=f"name the {what} without a leading '-'",
        )
    return value


def _with_link_mode(env: Sequence[tuple[str, str]], mounts: Mounts) -> list[tuple[str, str]]:
    # The uv cache and the workdir are separate bind mounts, and Linux refuses hard links
    # across mounts (EXDEV) even on one filesystem: uv would warn on every install and copy.
    pairs = list(env)
    copy = [("UV_LINK_MODE", "copy")] if mounts.cache and "UV_LINK_MODE" not in dict(pairs) else []
    return pairs + copy


def _env_args(env: Sequence[tuple[str, str]]) -> list[str]:
    return [arg for key, value in env for arg in ("-e", f"{key}={value}")]


def run_argv(
    placement: Placement,
    command: Sequence[str],
    *,
    mounts: Mounts,
    tty: bool,
    name: str | None = None,
    gpus: bool = False,
    version_first: bool = False,
) -> list[str]:
    image = operand(placement.image, "image")
    # The engine's signal proxy stays on: a `run --rm` client that a signal kills can drop
    # the container from the engine's records while its processes run on (podman 4.3).
    # --init (podman's catatonit, docker's tini) hands the proxied signal to its one child;
    # the command's whole process group must get it, once, as from a terminal's Ctrl-C:
    # tini does so by its variable, catatonit by `-g`, so podman's is mounted and run so.
    argv = [placement.engine, "run", "--rm", "--init", "-i", *(["-t"] if tty else [])]
    argv += [f"--name={operand(name, 'container name')}"] if name else []
    argv += (["--gpus", "all"] if gpus else []) + mounts.volume_args()
    init = placement.init
    argv += ["-v", f"{init}:{INIT}:ro"] if init else []
    tini = () if init else (("TINI_KILL_PROCESS_GROUP", "1"),)
    argv += _env_args(_with_link_mode([*placement.env, *tini], mounts))
    argv += [*placement.extra_args, image, *([INIT, "-g", "--"] if init else [])]
    script = VERSION_FIRST if version_first else FOUND_OR_127
    return [*argv, "/bin/sh", "-c", script, *command]


INIT = "/run/uvdock-init"
# The command as a shell runs it, but a missing one is named as such (exit 127), not as the
# init's "failed to exec pid1". `exec` keeps the command in the init's child's place.
_FOUND = 'command -v "$0" >/dev/null || { echo "$0: not found in the container" >&2; exit 127; }; '
FOUND_OR_127 = _FOUND + 'exec "$0" "$@"'
# The probe of the command's version (uv's) rides along in the container that runs it, as
# the first line of stderr: one container start, not two (vfs storage copies the image).
VERSION_LINE = "uvdock-version: "
VERSION_FIRST = _FOUND + f'echo "{VERSION_LINE}$("$0" --version)" >&2; exec "$0" "$@"'


def start_failure(
    placement: Placement, message: str, config_file: Path, engine_args: str
) -> EnvironmentUnusable:
    """The engine could not start a run container (exit 125): its own last words, and the
    fix for the causes known to happen (rootless networking, a missing network, storage)."""
    engine, text = placement.engine, message.lower()
    if any(sign in text for sign in ("slirp4netns", "/dev/net/tun", "pasta", "rootlessport")):
        hint = (
            f"{engine}'s rootless networking does not work here: use the host's network, "
            f'`engine-args = ["--network=host"]` in {config_file}'
        )
    elif "network" in text and ("not found" in text or "unable to find" in text):
        hint = (
            f"{engine} has no network of that name: create it (`{engine} network create NAME`)"
            f" or drop --network from engine-args ({engine_args})"
        )
    elif "no space left" in text or "storage" in text:
        hint = f"{engine}'s storage is full or unusable: see `{engine} system df`, `{engine} info`"
    else:
        hint = f"`{engine} run` fails the same way by hand; `uvdock doctor` checks the engine"
    said = (message.strip().splitlines() or ["no message"])[-1].strip().removeprefix("Error: ")
    return EnvironmentUnusable(
        f"{engine} could not start a container of {placement.image}: {said}", hint=hint
    )


def srun_argv(
    placement: Placement,
    command: Sequence[str],
    *,
    mounts: Mounts,
    pty: bool,
    nodes: int | None = None,
    gpus_per_node: int | None = None,
    job_name: str | None = None,
    shape: Sequence[str] = (),
) -> list[str]:
    """srun with pyxis. The step's variables go into srun's own environment (srun_env), as
    `--export=ALL,VAR=value` loses to a VAR the caller already has on Slurm 22.05. The
    reusable container (`placement.container`) is `no_exec`: never another step's running
    one, whose mounts may be another checkout's; it is writable (`uvdock sync` installs into
    it), as is one named in engine-args unless they say otherwise. `shape` (nodes, tasks:
    slurm_steps.shape_args) comes after engine-args, so it wins."""
    argv = ["srun"]
    argv += [f"--job-name={operand(job_name, 'job name')}"] if job_name else []
    argv += [f"--nodes={nodes}"] if nodes is not None else []
    argv += [f"--gpus-per-node={gpus_per_node}"] if gpus_per_node is not None else []
    argv += [
        f"--container-image={operand(placement.image, 'image')}",
        f"--container-mounts={mounts.pyxis_mounts()}",
        f"--container-workdir={mounts.workdir}",
        # The step's PATH (srun_env: the venv first) over the one enroot builds from the
        # image's login.defs, which drops the image's ENV PATH and so the venv.
        "--container-env=PATH",
    ]
    if placement.container:
        argv.append(f"--container-name={operand(placement.container, 'container name')}:no_exec")
    chosen = {"--container-writable", "--container-readonly"} & set(placement.extra_args)
    argv += ["--container-writable"] if placement.outlives_command() and not chosen else []
    return [*argv, *placement.extra_args, *shape, *(["--pty"] if pty else []), *command]


def srun_env(
    env: Mapping[str, str], placement: Placement, mounts: Mounts, *, venv: str = ""
) -> dict[str, str]:
    """srun's own environment for a step: pyxis hands it to the container. uv's cache is
    set to the mount, or a non-root user's uv would write under HOME on the read-only
    root filesystem. pyxis keeps the caller's PATH over the image's ENV PATH, so the
    venv's bin (first in the CI image's PATH) goes first, or `python` is not found."""
    step = dict(env)
    if venv:
        bin_dir = f"{venv.rstrip('/')}/bin"
        path = step.get("PATH", "/usr/local/bin:/usr/bin:/bin")
        if path.split(":")[0] != bin_dir:
            step["PATH"] = f"{bin_dir}:{path}"
    if mounts.cache:
        step["UV_CACHE_DIR"] = mounts.container_cache
    step.update(_with_link_mode(placement.env, mounts))
    return step


def command_argv(
    placement: Placement,
    command: Sequence[str],
    *,
    mounts: Mounts,
    tty: bool,
    name: str | None = None,
    version_first: bool = False,
    shape: Sequence[str] = (),
) -> list[str]:
    """The argv that runs `command` at `placement` (uv work: never with GPUs)."""
    if placement.mode == "local":
        return list(command)
    if placement.mode == "exec":
        argv = [placement.engine, "exec", "-i", *(["-t"] if tty else []), "-w", mounts.workdir]
        container = operand(placement.container, "container")
        return [*argv, *_env_args(placement.env), container, *command]
    if placement.mode == "srun":
        return srun_argv(placement, command, mounts=mounts, pty=tty, job_name=name, shape=shape)
    return run_argv(
        placement, command, mounts=mounts, tty=tty, name=name, version_first=version_first
    )


def inside_ci_container(env: Mapping[str, str], venv: str) -> bool:
    """True when this process already runs in the CI image: it sets IMAGE_TYPE and has the
    configured venv. Being in *some* container (a /.dockerenv alone) is not enough: CI
    sandboxes are containers too."""
    if env.get("IMAGE_TYPE"):
        return True
    in_container = os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")
    return in_container and os.path.isfile(os.path.join(venv, "bin", "python"))


def mounted_at(mounts: Sequence[Mapping[str, object]], workdir: str) -> str | None:
    """The host path that `docker inspect`'s Mounts place at `workdir`, if any."""
    target = workdir.rstrip("/") or "/"
    found: list[tuple[int, str]] = []  # (how long the mount's destination is, the host path)
    for mount in mounts:
        source = str(mount.get("Source", ""))
        dest = str(mount.get("Destination", "")).rstrip("/") or "/"
        if target == dest or dest == "/" or target.startswith(dest + "/"):
            rest = target[len(dest) :].lstrip("/")
            found.append((len(dest), os.path.join(source, rest) if rest else source))
    return max(found, key=lambda f: f[0])[1] if found else None  # the innermost mount
