"""Repository text in Markdown that uvdock writes (PR bodies, CI comments). Pure."""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")


def code_span(text: str) -> str:
    """`text` as one inline code span that the text cannot end: a file's value with a
    backtick would otherwise let links, images or HTML after it render in a pull request.
    CommonMark: the fence is longer than any backtick run inside; a backtick at either end
    is padded with a space, which the renderer strips."""
    if not text:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
