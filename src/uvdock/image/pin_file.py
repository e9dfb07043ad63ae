"""A pin file: one image reference and nothing else (Megatron-LM's docker/.ngc_version.*, or
a file a CI build reads with `$(cat FILE)`), and the managed pin of a span of any file.
"""

from __future__ import annotations

from uvdock.image.pins import Finding, Pin
from uvdock.registry.tags import PREFIX


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _tag_of(value: str) -> str:
    return value[len(PREFIX) :] if value.startswith(PREFIX) else value


def managed_pin(
    path: str, text: str, lane: str, source: str, start: int, end: int, **extra: str
) -> Pin:
    value = text[start:end]
    return Pin(
        path, line_of(text, start), lane, _tag_of(value), True, source, value, start, end, **extra
    )


def pin_file_pin(path: str, text: str, lane: str) -> Pin | Finding:
    """The one image reference a pin file holds, or why it does not hold exactly one.

    Surrounding blank space (and a BOM) is allowed; anything else (a second line, a comment,
    merge-conflict markers) is a finding, and a bump refuses to guess which line is the pin.
    """
    start = 1 if text.startswith("\ufeff") else 0
    body = text[start:]
    stripped = body.strip()
    words = stripped.split()
    if len(words) == 1:
        begin = start + len(body) - len(body.lstrip())
        return managed_pin(path, text, lane, "pin-file", begin, begin + len(stripped))
    if not words:
        problem = "is empty"
    elif any(line.startswith(("<<<<<<<", "=======", ">>>>>>>")) for line in body.splitlines()):
        problem = "holds merge-conflict markers"
    elif stripped.startswith("#"):
        problem = "starts with a comment"
    else:
        problem = f"holds {len(words)} words on {len(stripped.splitlines())} line(s)"
    return Finding(
        "pin-file-content",
        lane,
        path,
        1,
        f"{lane} pin file {problem}; it must hold exactly one image reference",
    )
