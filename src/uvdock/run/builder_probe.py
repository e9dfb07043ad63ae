"""Ask the engine what builds an image: podman's buildah version, docker's BuildKit, or
podman behind the docker CLI. Read-only queries; see image/heredoc.py for why."""

from __future__ import annotations

import json
from collections.abc import Mapping

from uvdock.image.heredoc import Builder
from uvdock.run import proc
from uvdock.run.probe import daemon_silent

_TIMEOUT = 30.0


def builder(engine: str, env: Mapping[str, str]) -> Builder:
    if engine == "podman":
        return _podman(env)
    return _docker(env)


def _podman(env: Mapping[str, str]) -> Builder:
    out = proc.run(
        ["podman", "version", "--format", "{{.Client.Version}}"],
        env=env,
        check=False,
        timeout=_TIMEOUT,
    )
    version = out.stdout.strip() if out.ok else ""
    info = proc.run(
        ["podman", "info", "--format", "{{.Host.BuildahVersion}}"],
        env=env,
        check=False,
        timeout=_TIMEOUT,
    )
    return Builder("podman", version, buildah=info.stdout.strip() if info.ok else "")


def _docker(env: Mapping[str, str]) -> Builder:
    out = proc.run(
        ["docker", "version", "--format", "{{json .}}"], env=env, check=False, timeout=_TIMEOUT
    )
    client, podman = _docker_versions(out.stdout)
    if not out.ok and daemon_silent(out.stderr):
        return Builder("docker", client)  # no daemon: the build itself says so, with its hint
    if podman:
        return Builder("docker", client, podman_server=podman)
    if env.get("DOCKER_BUILDKIT", "").strip() == "0":
        return Builder("docker", client, buildkit=False, buildkit_why="DOCKER_BUILDKIT=0")
    buildx = proc.run(["docker", "buildx", "version"], env=env, check=False, timeout=_TIMEOUT)
    if not buildx.ok:
        why = "no buildx plugin: `docker build` falls back to the legacy builder"
        return Builder("docker", client, buildkit=False, buildkit_why=why)
    return Builder("docker", client)


def _docker_versions(text: str) -> tuple[str, str]:
    """(the docker client's version, podman's version when podman serves the socket)."""
    try:
        data = json.loads(text.strip().splitlines()[0]) if text.strip() else {}
    except ValueError:
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    client = str((data.get("Client") or {}).get("Version", ""))
    server = data.get("Server") or {}
    for component in server.get("Components") or []:
        if "podman" in str(component.get("Name", "")).lower():
            return client, str(component.get("Version", ""))
    return client, ""
