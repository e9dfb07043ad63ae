"""NGC PyTorch tags: `YY.MM-py3`, month 01-12; parsing what a user types, with a hint.

Digits are ASCII only: Python's `\\d` also takes fullwidth and other scripts' digits,
which no registry serves and which would be written to every pin.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from uvdock.errors import InputRefused

REPOSITORY = "nvcr.io/nvidia/pytorch"
PREFIX = REPOSITORY + ":"

_YYMM = r"(?P<y>[0-9]{2})\.(?P<m>0[1-9]|1[0-2])"
_TAG = re.compile(_YYMM + "-py3")


def is_tag(text: str) -> bool:
    return _TAG.fullmatch(text) is not None


def tag_key(tag: str) -> tuple[int, int]:
    if (match := _TAG.fullmatch(tag)) is None:
        raise ValueError(f"not a YY.MM-py3 tag: {tag!r}")
    return int(match["y"]), int(match["m"])


def parse_tag_argument(text: str) -> str:
    """A user's TAG (`YY.MM-py3` or the full reference) as a bare tag; refuses anything else."""
    tag = text.strip()
    if not tag.startswith(PREFIX) and (":" in tag or "/" in tag):
        raise InputRefused(
            f"`{text}` is not an {REPOSITORY} image",
            hint=f"give a tag like 26.04-py3 or a reference like {PREFIX}26.04-py3",
        )
    tag = tag.removeprefix(PREFIX)
    if is_tag(tag):
        return tag
    month = re.fullmatch(r"[0-9]{2}\.([0-9]{2})-py3", tag)
    problem = f"month {month[1]} is not 01-12" if month else "expected YY.MM-py3, e.g. 26.04-py3"
    close = re.fullmatch(r"v?(?:20)?([0-9]{2})[.\-_/]([0-9]{1,2})(?:-?py3?)?", tag, re.IGNORECASE)
    hint = "NGC PyTorch tags look like 26.04-py3"
    if close and 1 <= int(close[2]) <= 12:
        hint = f"did you mean `{close[1]}.{int(close[2]):02d}-py3`?"
    raise InputRefused(f"invalid tag `{text}`: {problem}", hint=hint)


# The registries whose NVIDIA images uvdock orders: NGC (every nvcr.io/nvidia/<name>) and
# Docker Hub's nvidia/cuda. Docker Hub is named with or without its host.
# Patterns as text, compiled on first use (re caches them): `image check` on Megatron-LM
# never orders another image, and its start-up time is budgeted.
_NVIDIA_REPOSITORY = (
    r"(?:nvcr\.io/nvidia/[a-z0-9][a-z0-9._/-]*|(?:(?:docker\.io|index\.docker\.io)/)?nvidia/cuda)"
)
_SUFFIX = r"(?P<suffix>[a-z][a-z0-9]*(?:[.-][a-z0-9]+)*)"
# Each scheme: the tag pattern, and what stays the same within one family.
_SCHEMES = (
    (_YYMM + "-py3", "YY.MM-py3"),
    (_YYMM + r"-cuda(?P<cuda>[0-9]+(?:\.[0-9]+)*)-" + _SUFFIX, "YY.MM-cuda<ver>-{suffix}"),
    (r"(?P<x>[0-9]+)\.(?P<yy>[0-9]+)\.(?P<z>[0-9]+)-" + _SUFFIX, "X.Y.Z-{suffix}"),
)
SCHEMES_TEXT = "YY.MM-py3, YY.MM-cuda<ver>-<flavour>-<os> or X.Y.Z-<flavour>-<os>"


class ImageTag(NamedTuple):
    """An image reference uvdock can order: newer and older only within one family."""

    repository: str  # as written, without the tag
    tag: str
    family: str  # the scheme with its fixed parts: `X.Y.Z-devel-ubuntu22.04`
    key: tuple[int, ...]

    @property
    def reference(self) -> str:
        return f"{self.repository}:{self.tag}"

    def same_family(self, other: ImageTag) -> bool:
        return (_hub(self.repository), self.family) == (_hub(other.repository), other.family)


def _hub(repository: str) -> str:
    return re.sub(r"^(?:index\.)?docker\.io/", "", repository)


def parse_image(reference: str) -> tuple[ImageTag | None, str]:
    """The reference as an orderable NVIDIA image, or None and why it is not one."""
    if not reference:
        return None, "no image: a variable without a value"
    if "$" in reference:
        return None, f"`{reference}` names a variable uvdock has no value for"
    name, _, digest = reference.partition("@")
    repository, colon, tag = name.rpartition(":")
    if not colon or "/" in tag:
        repository, tag = name, ""
    if re.fullmatch(_NVIDIA_REPOSITORY, repository) is None:
        return None, f"`{repository}` is not an NGC (nvcr.io/nvidia/...) or nvidia/cuda image"
    if digest and not tag:
        return None, f"`{reference}` is pinned by digest only; no tag to order"
    for pattern, family in _SCHEMES:
        if (match := re.fullmatch(pattern, tag)) is not None:
            numbers = [g for k, g in match.groupdict().items() if k != "suffix" and g]
            key = tuple(int(part) for n in numbers for part in n.split("."))
            return ImageTag(repository, tag, family.format_map(match.groupdict()), key), ""
    return None, f"tag `{tag or '(none: latest)'}` follows no known scheme ({SCHEMES_TEXT})"


def newest(tags: list[str], like: ImageTag) -> list[str]:
    """The tags of `like`'s family, newest first (for `image tags` and `--latest`)."""
    found = [parse_image(f"{like.repository}:{tag}")[0] for tag in tags]
    family = [t for t in found if t is not None and t.same_family(like)]
    return [t.tag for t in sorted(family, key=lambda t: t.key, reverse=True)]
