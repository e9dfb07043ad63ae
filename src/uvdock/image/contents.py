"""What a base-image bump moves: the component versions NGC images state as ENV (no changelog
a bot can read), compared per platform; a new PyTorch or CUDA major or minor is named."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from uvdock.registry.image_config import TagImage
from uvdock.registry.tags import tag_key

# (label, ENV names in order of preference); the first one an image sets is shown.
COMPONENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("NGC PyTorch release", ("NVIDIA_PYTORCH_VERSION",)),
    ("PyTorch", ("PYTORCH_VERSION", "PYTORCH_BUILD_VERSION")),
    ("CUDA", ("CUDA_VERSION",)),
    ("cuDNN", ("CUDNN_VERSION",)),
    ("NCCL", ("NCCL_VERSION",)),
    ("TensorRT", ("TRT_VERSION", "TENSORRT_VERSION")),
    ("Transformer Engine", ("TRANSFORMER_ENGINE_VERSION",)),
    ("Python", ("PYTHON_VERSION",)),
)
KEYS = tuple(key for _, keys in COMPONENTS for key in keys)

_MAJOR_MINOR = re.compile(r"(\d+)\.(\d+)")


class Component(NamedTuple):
    label: str
    key: str  # the ENV name it was read from (the new image's, else the old's)
    before: str  # one value, or `value (platform)` entries joined by ", " when platforms differ
    after: str
    callout: str  # "", "major" or "minor": a PyTorch / CUDA release change worth naming

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.label,
            "key": self.key,
            "from": self.before or None,
            "to": self.after or None,
            "changed": self.changed,
            "callout": self.callout or None,
        }


def tag_json(image: TagImage) -> dict[str, Any]:
    """The image as JSON with only the version variables of its ENV (it may hold a token)."""
    data = image.to_json()
    for platform in data["platforms"]:
        if platform["env"] is not None:
            platform["env"] = {k: v for k, v in platform["env"].items() if k in KEYS}
    return data


def release_notes_url(tag: str) -> str:
    """NGC's release notes page of a YY.MM-py3 tag: .../rel-YY-MM.html."""
    year, month = tag_key(tag)
    notes = "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes"
    return f"{notes}/rel-{year:02d}-{month:02d}.html"


def _value(image: TagImage | None, keys: tuple[str, ...]) -> tuple[str, str]:
    """(ENV name, value as shown) over the platforms whose environment was read."""
    found: list[tuple[str, str, str]] = []  # (key, platform, value)
    for platform in image.platforms if image else ():
        key = next((k for k in keys if platform.env and platform.env.get(k)), "")
        if key and platform.env:
            found.append((key, platform.platform, platform.env[key]))
    values = {value for _, _, value in found}
    used = found[0][0] if found else ""
    if len(values) <= 1:
        return used, next(iter(values), "")
    return used, ", ".join(f"{value} ({platform or '?'})" for _, platform, value in found)


def compare(before: TagImage | None, after: TagImage | None) -> list[Component]:
    """The components either image states, in NGC's order; absent ones left out."""
    components = []
    for label, keys in COMPONENTS:
        (old_key, old), (new_key, new) = _value(before, keys), _value(after, keys)
        was, now = _MAJOR_MINOR.match(old), _MAJOR_MINOR.match(new)
        callout = ""
        if label in ("PyTorch", "CUDA") and was and now:  # named above the table
            callout = "major" if was[1] != now[1] else "minor" if was[2] != now[2] else ""
        if old or new:
            components.append(Component(label, new_key or old_key, old, new, callout))
    return components


def callouts(components: Sequence[Component]) -> list[str]:
    """`PyTorch 2.8 -> 2.9 (a new minor release)` for each called-out change."""
    pairs = ((c, _MAJOR_MINOR.match(c.before), _MAJOR_MINOR.match(c.after)) for c in components)
    return [
        f"{c.label} {old[0]} -> {new[0]} (a new {c.callout} release)"
        for c, old, new in pairs
        if c.callout and old and new  # a callout needs both
    ]


def problems(images: Sequence[TagImage | None]) -> list[str]:
    return [
        f"{image.tag}{f' ({found.platform})' if found.platform else ''}: {found.problem}"
        for image in filter(None, images)
        for found in image.platforms
        if found.problem
    ]


class ImageReport(NamedTuple):
    old_tag: str | None
    new_tag: str
    before: TagImage | None = None  # None: not read, or the registry has no such tag
    after: TagImage | None = None
    skipped: str = ""  # non-empty: the registry was not asked (offline) or not reachable
    unread: tuple[str, ...] = ()  # the old tag could not be read at all, and why

    def not_found(self) -> list[str]:
        if self.skipped:
            return []
        pairs = ((self.old_tag, self.before), (self.new_tag, self.after))
        unread = " ".join(self.unread)
        return [tag for tag, image in pairs if tag and image is None and tag not in unread]

    def to_json(self) -> dict[str, Any]:
        components = compare(self.before, self.after)
        return {
            "checked": not self.skipped,
            "skipped": self.skipped or None,
            "from": tag_json(self.before) if self.before else None,
            "to": tag_json(self.after) if self.after else None,
            "versions": [c.to_json() for c in components],
            "callouts": callouts(components),
            "not_found": self.not_found(),
            "problems": [*self.unread, *problems((self.before, self.after))],
            "release_notes": release_notes_url(self.new_tag),
        }
