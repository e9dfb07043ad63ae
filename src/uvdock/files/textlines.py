"""Text as uvdock edits it: read exactly, cut into lines that know their offsets and endings.

Every edit must leave untouched bytes as they were, so files are read with `newline=""`
(CRLF and a missing final newline survive) and split on LF only, the way `git grep -n`
numbers lines: a CR before the LF is part of the ending, never content. The YAML helpers
serve the line scanners of image/ (GitLab matrix rows) and recipes/ (test recipes), which
keep quotes, comments and key order a YAML library would lose.

Imported by `image check`, whose start-up time is budgeted: only `re`, records are NamedTuples.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

# A mapping key on one line: indentation, an optional list dash, the key (bare, 'single' or
# "double" quoted), the colon followed by a space or the end of the line, then the value
# and any comment as `rest` (without the leading blanks).
YAML_KEY_LINE = re.compile(
    r"""(?P<indent>[ ]*)(?P<dash>-[ ]+)?"""
    r"""(?P<key>"[^"\n]*"|'[^'\n]*'|[A-Za-z_][\w.\-/]*)[ \t]*:(?=[ \t]|$)[ \t]*(?P<rest>.*)"""
)


class Line(NamedTuple):
    number: int  # 1-based
    offset: int  # where the line starts in the text
    content: str  # without the ending
    ending: str  # "\n", "\r\n", or "" for a last line without a final newline

    @property
    def text(self) -> str:
        return self.content + self.ending


def read_text(path: Path) -> str:
    """The file's text exactly as stored. Raises OSError or UnicodeDecodeError for callers
    to word (each command says what the file is to the user)."""
    with path.open(encoding="utf-8", newline="") as fh:
        return fh.read()


def split_lines(text: str) -> list[Line]:
    """The text's lines; joining their `text` gives the text back. No line after a final LF."""
    lines: list[Line] = []
    offset = 0
    number = 1
    size = len(text)
    while offset < size:
        newline = text.find("\n", offset)
        if newline < 0:
            lines.append(Line(number, offset, text[offset:], ""))
            break
        if newline > offset and text[newline - 1] == "\r":
            lines.append(Line(number, offset, text[offset : newline - 1], "\r\n"))
        else:
            lines.append(Line(number, offset, text[offset:newline], "\n"))
        offset = newline + 1
        number += 1
    return lines


def join_lines(lines: list[Line]) -> str:
    return "".join(line.content + line.ending for line in lines)


def ending_of(line: str) -> str:
    """The ending of one line kept with its ending: "\r\n", "\n" or ""."""
    if line.endswith("\r\n"):
        return "\r\n"
    return "\n" if line.endswith("\n") else ""


def unquote(text: str) -> str:
    """A YAML scalar or key without its surrounding blanks and 'single' or "double" quotes."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text
