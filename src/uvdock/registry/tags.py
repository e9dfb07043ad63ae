"""NGC PyTorch tags: `YY.MM-py3`, month 01-12; parsing what a user types, with a hint.

Digits are ASCII only: Python's `\\d` also takes fullwidth and other scripts' digits,
which no registry serves and which would be written to every pin.
"""

from __future__ import annotations

import re

from uvdock.errors import InputRefused

REPOSITORY = "nvcr.io/nvidia/pytorch"
PREFIX = REPOSITORY + ":"

_TAG = re.compile(r"(?P<year>[0-9]{2})\.(?P<month>0[1-9]|1[0-2])-py3")


def is_tag(text: str) -> bool:
    return _TAG.fullmatch(text) is not None


def tag_key(tag: str) -> tuple[int, int]:
    match = _TAG.fullmatch(tag)
    if match is None:
        raise ValueError(f"not a YY.MM-py3 tag: {tag!r}")
    return int(match["year"]), int(match["month"])


def _suggest_tag(text: str) -> str | None:
    pattern = r"v?(?:20)?([0-9]{2})[.\-_/]([0-9]{1,2})(?:-?py3?)?"
    match = re.fullmatch(pattern, text.strip(), re.IGNORECASE)
    if match is None:
        return None
    month = int(match[2])
    if not 1 <= month <= 12:
        return None
    return f"{match[1]}.{month:02d}-py3"


def parse_tag_argument(text: str) -> str:
    """A user's TAG (`YY.MM-py3` or the full reference) as a bare tag; refuses anything else."""
    tag = text.strip()
    if tag.startswith(PREFIX):
        tag = tag[len(PREFIX) :]
    elif ":" in tag or "/" in tag:
        raise InputRefused(
            f"`{text}` is not an {REPOSITORY} image",
            hint=f"give a tag like 26.04-py3 or a reference like {PREFIX}26.04-py3",
        )
    if is_tag(tag):
        return tag
    suggestion = _suggest_tag(tag)
    month = re.fullmatch(r"[0-9]{2}\.([0-9]{2})-py3", tag)
    if month is not None:
        problem = f"month {month[1]} is not 01-12"
    else:
        problem = "expected YY.MM-py3, e.g. 26.04-py3"
    hint = f"did you mean `{suggestion}`?" if suggestion else "NGC PyTorch tags look like 26.04-py3"
    raise InputRefused(f"invalid tag `{text}`: {problem}", hint=hint)
