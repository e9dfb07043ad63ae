"""A failure log of any size, read in blocks of whole lines (BLOCK bytes) and cleaned as a
terminal shows it: colour and title codes removed, carriage-return redraws collapsed, CI
timestamps dropped. A line is cut at MAX_LINE bytes (a 2 GB log without a newline is one), so
memory is a block and one carried line. The text stays bytes (UTF-8 as written): only the lines
a finding shows are decoded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

BLOCK = 1 << 20
MAX_LINE = 8 * 1024  # bytes of a line kept: every signature's words fit many times over
TRUNCATED = b" [...]"

# Escape sequences a CI log carries: CSI (colours, cursor), OSC (titles, links; ended by BEL or
# ST, or cut off), DCS/SOS/PM/APC strings, and two-byte escapes. No class can run past the
# next ESC, so each start scans only to the next sequence: linear on any input.
_ESCAPES = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]?"
    rb"|\x1b[\]PX^_][^\x1b\x07\n]*(?:\x07|\x1b\\)?"
    rb"|\x1b[ -Z\\`-~]?"
)
# CI log prefixes: GitHub Actions `2024-05-01T10:00:00.1234567Z `, GitLab `[12:00:00] `.
_STAMP = rb"(?:\d{4}-\d\d-\d\dT[\d:.]{1,40}Z[ \t]|\[\d\d:\d\d:\d\d\][ \t])"
_TIMESTAMP = re.compile(_STAMP)
_NEXT_STAMP = re.compile(rb"\n" + _STAMP)


def _visible(line: bytes) -> bytes:
    """What stays on screen of a line redrawn with carriage returns (the text after the last
    CR that something followed), cut at MAX_LINE."""
    line = line.rstrip(b"\r").rpartition(b"\r")[2]
    return line[:MAX_LINE] + TRUNCATED if len(line) > MAX_LINE else line


def _carried(text: bytes) -> bytes:
    """The unfinished last line as it stays on screen so far (a progress bar: many CRs), cut at
    MAX_LINE + 1 bytes however long it grows; one trailing CR says the next text starts over."""
    shown = text.rstrip(b"\r")
    return shown.rpartition(b"\r")[2][: MAX_LINE + 1] + b"\r" * (len(shown) < len(text))


def blocks(stream: BinaryIO) -> Iterator[bytes]:
    """The log as cleaned blocks of whole lines (b"\\n"-separated, no final newline)."""
    carry = b""
    stamped: bool | None = None
    while chunk := stream.read(BLOCK):
        body, newline, tail = chunk.rpartition(b"\n")
        if not newline:
            carry = _carried(carry + chunk)
            continue
        first, more, body = body.partition(b"\n")
        lines = [_visible(carry + first)]
        if more:
            rest = body.split(b"\n")
            if b"\r" in body or max(map(len, rest)) > MAX_LINE:
                rest = [_visible(line) for line in rest]
            lines += rest
        carry = _carried(tail)
        text, stamped = _clean(b"\n".join(lines), stamped)
        yield text
    if carry.rstrip(b"\r"):
        yield _clean(_visible(carry), stamped)[0]


def _clean(text: bytes, stamped: bool | None) -> tuple[bytes, bool]:
    if b"\x1b" in text:
        text = _ESCAPES.sub(b"", text)
    first = _TIMESTAMP.match(text)
    if stamped is None:  # CI runners stamp every line: the head of the log tells
        stamped = first is not None or _NEXT_STAMP.search(text, 0, 64 * 1024) is not None
    if stamped:
        # After a line feed: a search that starts at a literal runs faster than one at `^`.
        text = _NEXT_STAMP.sub(b"\n", text[first.end() :] if first else text)
    return text, stamped
