"""Which container engine this host runs (who owns the files a container writes is
run/ownership.py's question)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from uvdock.errors import EnvironmentUnusable
from uvdock.run import engines, proc


def pick_engine(asked: str, env: Mapping[str, str], *, dry_run: bool, said: str = "") -> str:
    """docker or podman: the one asked for, else the one most likely to be reachable.
    `said`: the setting as the user should read it (who chose it), for messages."""
    if asked in engines.CONTAINER_ENGINES:
        if proc.which(asked, env) is None and not dry_run:
            raise EnvironmentUnusable(
                f"{said or '--engine ' + asked}: `{asked}` is not installed or not on PATH"
            )
        return asked
    has_docker = proc.which("docker", env) is not None
    has_podman = proc.which("podman", env) is not None
    docker_daemon = bool(env.get("DOCKER_HOST")) or os.path.exists("/var/run/docker.sock")
    if has_docker and docker_daemon:
        if has_podman and not _docker_answers(env):
            return "podman"  # a docker socket no daemon answers (stopped, or stale)
        return "docker"
    if has_podman:
        return "podman"
    if has_docker:
        return "docker"
    if dry_run:
        return "docker"
    raise EnvironmentUnusable(
        "no container engine found: install docker or podman, or use --engine srun / --engine local",
    )


def _docker_answers(env: Mapping[str, str]) -> bool:
    """Whether docker's daemon answers (asked only when podman is there to take over)."""
    from uvdock.run import probe

    return not probe.image("docker", "uvdock-probe", env, timeout=30).unreachable


def engine_init(engine: str, env: Mapping[str, str]) -> str:
    """podman's own init (catatonit) on this host, to run in a container with `-g` (see
    engines.run_argv); "" for docker, whose init (tini) takes a variable instead."""
    if engine != "podman":
        return ""
    for found in ("/usr/libexec/podman/catatonit", proc.which("catatonit", env)):
        if found and os.path.isfile(found):
            return found
    return ""
