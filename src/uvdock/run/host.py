"""Facts about this host that decide how containers are run: which engine answers, and
who should own the files a container writes."""

from __future__ import annotations

import os
from collections.abc import Mapping

from uvdock.errors import EnvironmentUnusable
from uvdock.run import engines, proc


def pick_engine(asked: str, env: Mapping[str, str], *, dry_run: bool) -> str:
    """docker or podman: the one asked for, else the one most likely to be reachable."""
    if asked in engines.CONTAINER_ENGINES:
        if proc.which(asked, env) is None and not dry_run:
            raise EnvironmentUnusable(
                f"--engine {asked}: `{asked}` is not installed or not on PATH"
            )
        return asked
    has_docker = proc.which("docker", env) is not None
    has_podman = proc.which("podman", env) is not None
    docker_daemon = bool(env.get("DOCKER_HOST")) or os.path.exists("/var/run/docker.sock")
    if has_docker and docker_daemon:
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


def invoking_user(env: Mapping[str, str]) -> tuple[int, int] | None:
    """Who should own files written for this run: the user, or under sudo the sudoer.

    None when that is root itself (nothing to give back).
    """
    uid, gid = os.getuid(), os.getgid()
    if uid == 0 and env.get("SUDO_UID", "").isdigit():
        sudo_uid = int(env["SUDO_UID"])
        sudo_gid = env.get("SUDO_GID", "")
        return sudo_uid, int(sudo_gid) if sudo_gid.isdigit() else sudo_uid
    return None if uid == 0 else (uid, gid)
