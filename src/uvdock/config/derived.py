"""The CI image settings of a repository not laid out like Megatron-LM, derived from it:
the Dockerfile its CI builds (its base a lane: image/lanes.py), that target and
`<folder>:local`, each with the reason `image show --explain` prints; never over a set value."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uvdock.config.settings import Layers


def _choice(repo: Path) -> tuple[str, str | None, str] | None:
    """(Dockerfile, target or None for its last stage, why) of the CI image, or None."""
    from uvdock.image.lanes import discover, repository_files

    found = discover(repo, set())
    # Each lane's first rule (a later one would overwrite it in order).
    lanes: dict[str | None, str] = {r.lane: r.dockerfile for r in reversed(found.lanes)}
    counts = Counter(lanes[pin.lane] for pin in found.pins)
    if counts:
        path = max(sorted(counts), key=lambda p: (counts[p], "ci" in p.lower()))
        why = f"the Dockerfile whose NVIDIA base is managed ({counts[path]} references)"
    elif len(dockerfiles := repository_files(repo)[0]) == 1:
        path, why = dockerfiles[0], "the repository's only Dockerfile"
    else:
        return None
    target = next((b.target for b in found.builds if b.dockerfile == path and b.target), None)
    return path, target, why


# What a repository not laid out like Megatron-LM gets instead of Megatron-LM's defaults.
DERIVED = ("dockerfile", "build_target", "image", "lts_image", "enroot_output",
           "registry_image", "lts_registry_image")  # fmt: skip


def derive(repo: Path, layers: Layers) -> Layers:
    """The DERIVED settings no one set, when Megatron-LM's Dockerfile is not there."""
    origins, config = dict(layers.origins), layers.config
    default = repo / type(config)._field_defaults["dockerfile"]
    if default.is_file() or not set(DERIVED) - origins.keys():
        return layers
    chosen = _choice(repo)
    if "dockerfile" not in origins and chosen is None:
        return layers
    path, target, why = chosen or (config.dockerfile, None, "")
    if "dockerfile" in origins:
        path, target = config.dockerfile, target if path == config.dockerfile else None
    name = re.sub(r"[^a-z0-9._-]+", "-", repo.resolve().name.lower()).strip(".-_") or "ci"
    built = f"derived: the repository folder's name, built from {path}"
    not_ours = "derived: Megatron-LM's registry image is not this repository's"  # its GitLab CI's
    stage = f"derived: the target CI builds from {path}" if target else "derived: its last stage"
    values: dict[str, Any] = {}
    for key, value, reason in (
        ("dockerfile", path, f"derived: {why}"),
        ("build_target", target or "", stage),
        ("image", f"{name}:local", built),
        ("lts_image", f"{name}:local-lts", built),
        ("enroot_output", f"{name}.sqsh", "derived: the repository folder's name"),
        ("registry_image", "", not_ours),
        ("lts_registry_image", "", not_ours),
    ):
        if key not in origins:
            values[key], origins[key] = value, reason
    return layers._replace(config=config.replace(**values), origins=origins)
