"""What the container engine knows about an image or a container, asked without changing anything."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from uvdock.run import proc
from uvdock.run.engines import operand

# What docker and podman say when nothing answers on their socket.
_NO_DAEMON = ("Cannot connect", "connect:", "dial unix", "Is the docker daemon running")


def daemon_silent(stderr: str) -> bool:
    """Whether an engine's error output says its daemon did not answer at all."""
    return any(sign in stderr for sign in _NO_DAEMON)


class ImageProbe(NamedTuple):
    present: bool
    unreachable: bool  # the engine's daemon did not answer
    stderr: str


def image(
    engine: str, image: str, env: Mapping[str, str], *, timeout: float | None = None
) -> ImageProbe:
    """Whether `image` is in the engine's local store."""
    out = proc.run(
        [engine, "image", "inspect", "--format", "{{.Id}}", operand(image, "image")],
        env=env,
        check=False,
        timeout=timeout,
    )
    return ImageProbe(out.ok, not out.ok and daemon_silent(out.stderr), out.stderr)


class ContainerInfo(NamedTuple):
    id: str
    running: bool
    mounts: list[Mapping[str, object]]


def container(
    engine: str, target: str, env: Mapping[str, str], *, timeout: float | None = None
) -> ContainerInfo | None:
    """A container's id, state and mounts, or None when the engine knows no such container."""
    # Plain JSON rather than --format: docker says .Id where podman's template says .ID.
    out = proc.run(
        [engine, "container", "inspect", operand(target, "container")],
        env=env,
        check=False,
        timeout=timeout,
    )
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
