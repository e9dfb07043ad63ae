"""Ask the engine what builds an image: podman's buildah version, docker's BuildKit, or
podman behind the docker CLI. Read-only queries; see image/heredoc.py for why."""

from __future__ import annotations

import json
from collections.abc import Mapping

from uvdock.image.heredoc import Builder
from uvdock.run import proc
from uvdock.run.probe import daemon_silent


def builder(engine: str, env: Mapping[str, str]) -> Builder:
    if engine == "podman":
        out = proc.ask(["podman", "version", "--format", "{{.Client.Version}}"], env)
        info = proc.ask(["podman", "info", "--format", "{{.Host.BuildahVersion}}"], env)
        return Builder(
            "podman",
            out.stdout.strip() if out.ok else "",
            buildah=info.stdout.strip() if info.ok else "",
        )
    out = proc.ask(["docker", "version", "--format", "{{json .}}"], env)
    client, podman = _docker_versions(out.stdout)
    if not out.ok and daemon_silent(out.stderr):
        return Builder("docker", client)  # no daemon: the build itself says so, with its hint
    if podman:
        return Builder("docker", client, podman_server=podman)
    if env.get("DOCKER_BUILDKIT", "").strip() == "0":
        return Builder("docker", client, buildkit=False, buildkit_why="DOCKER_BUILDKIT=0")
    if not proc.ask(["docker", "buildx", "version"], env).ok:
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
    components = (data.get("Server") or {}).get("Components") or []
    podman = [c for c in components if "podman" in str(c.get("Name", "")).lower()]
    return client, str(podman[0].get("Version", "")) if podman else ""
