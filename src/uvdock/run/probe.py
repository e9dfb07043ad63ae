"""What this host's container engine is and knows, asked without changing anything: which
engine, its init, an image, a container, and whether an exec target mounts this repository."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import EnvironmentUnusable
from uvdock.run import engines, git, proc

# What docker and podman say when nothing answers on their socket.
_NO_DAEMON = ("Cannot connect", "connect:", "dial unix", "Is the docker daemon running")


def unreachable(done: proc.Completed) -> bool:
    """Whether the engine failed because its daemon did not answer."""
    return not done.ok and any(sign in done.stderr for sign in _NO_DAEMON)


def pick_engine(asked: str, env: Mapping[str, str], *, dry_run: bool, said: str = "") -> str:
    """docker or podman: the one asked for, else the one most likely to be reachable.
    `said`: the setting as the user should read it (who chose it), for messages."""
    if asked in engines.CONTAINER_ENGINES:
        if proc.which(asked, env) is None and not dry_run:
            raise EnvironmentUnusable(
                f"{said or '--engine ' + asked}: `{asked}` is not installed or not on PATH"
            )
        return asked
    has_docker, has_podman = (proc.which(name, env) is not None for name in ("docker", "podman"))
    docker_daemon = bool(env.get("DOCKER_HOST")) or os.path.exists("/var/run/docker.sock")
    if has_docker and docker_daemon:  # unless no daemon answers it (stopped, or stale)
        silent = has_podman and unreachable(image("docker", "uvdock-probe", env, timeout=30))
        return "podman" if silent else "docker"
    if has_podman or has_docker or dry_run:
        return "podman" if has_podman else "docker"
    raise EnvironmentUnusable(
        "no container engine found: install docker or podman, or use --engine srun / --engine local",
    )


def engine_init(engine: str, env: Mapping[str, str]) -> str:
    """podman's own init (catatonit) on this host, to run in a container with `-g` (see
    engines.run_argv); "" for docker, whose init (tini) takes a variable instead."""
    places = ("/usr/libexec/podman/catatonit", proc.which("catatonit", env) or "")
    return next((p for p in places if engine == "podman" and os.path.isfile(p)), "")


def image(
    engine: str, image: str, env: Mapping[str, str], *, timeout: float | None = None
) -> proc.Completed:
    """`image inspect`: ok when the image is present (see `unreachable` for why not)."""
    argv = [engine, "image", "inspect", "--format", "{{.Id}}", engines.operand(image, "image")]
    return proc.run(argv, env=env, check=False, timeout=timeout)


class ContainerInfo(NamedTuple):
    id: str
    running: bool
    mounts: list[Mapping[str, object]]


def container(
    engine: str, target: str, env: Mapping[str, str], *, timeout: float | None = None
) -> ContainerInfo | None:
    """A container's id, state and mounts, or None when the engine knows no such container."""
    # Plain JSON rather than --format: docker says .Id where podman's template says .ID.
    argv = [engine, "container", "inspect", engines.operand(target, "container")]
    out = proc.run(argv, env=env, check=False, timeout=timeout)
    if not out.ok:
        return None
    import json

    try:
        info = json.loads(out.stdout)[0]
    except (ValueError, IndexError, KeyError):
        return None
    mounts = info.get("Mounts") or []
    return ContainerInfo(
        id=str(info.get("Id") or info.get("ID")),
        running=bool((info.get("State") or {}).get("Running")),
        mounts=mounts if isinstance(mounts, list) else [],
    )


# An exec target checked to run and mount this repository at the workdir: the check (an
# inspect) is the slow part of a cached exec, so its id is kept in the git dir, keyed by
# engine, container, workdir and repository. Mounts never change after a container is
# created, so a verified id stays valid until the container is gone.


def _key(placement: engines.Placement, workdir: str, repo: Path) -> str:
    return f"{placement.engine}:{placement.container}:{workdir}:{repo}"


def _verified_ids(repo: Path) -> dict[str, str]:
    # A record of tab-separated lines rather than JSON: this is read on every exec, and
    # importing json is a measurable share of that path's start-up budget.
    return dict(git.read_record(git.git_dir(repo), "verified-containers", "\t"))


def _remember(repo: Path, key: str, container_id: str | None) -> None:
    kept = [(k, v) for k, v in _verified_ids(repo).items() if k != key]
    new = [(key, container_id)] if container_id else []
    git.write_record(git.git_dir(repo), "verified-containers", "\t", kept + new)


def verified(
    placement: engines.Placement, workdir: str, repo: Path, env: Mapping[str, str], *, cached: bool
) -> str:
    """The exec target's id, once checked to run and mount `repo` at `workdir` (`cached`:
    an id checked before, without asking the engine)."""
    key = _key(placement, workdir, repo)
    if cached and (known := _verified_ids(repo).get(key)):
        return known
    info = container(placement.engine, placement.container, env)
    if info is None:
        raise EnvironmentUnusable(
            f"no container named {placement.container} ({placement.engine} container inspect failed)",
            hint="start one with the repository mounted, or use --image to run a fresh container",
        )
    if not info.running:
        raise EnvironmentUnusable(
            f"container {placement.container} is not running (start it first)"
        )
    source = engines.mounted_at(info.mounts, workdir)
    if source is None or Path(source).resolve() != repo.resolve():
        where = f"mounts {source}" if source else "mounts nothing"
        raise EnvironmentUnusable(
            f"container {placement.container} {where} at {workdir}, not this repository "
            f"({repo.resolve()}); refusing to run uv on another checkout",
            hint=f"start a container with -v {repo.resolve()}:{workdir}, or use --image",
        )
    _remember(repo, key, info.id)
    return info.id


def verified_gone(
    placement: engines.Placement, workdir: str, repo: Path, env: Mapping[str, str]
) -> bool:
    """Whether the id last verified for this exec target no longer exists (then forgotten)."""
    known = _verified_ids(repo).get(key := _key(placement, workdir, repo))
    if known and container(placement.engine, known, env) is None:
        _remember(repo, key, None)
        return True
    return False
