"""Text as uvdock edits it: read exactly, cut into lines that know their offsets and endings.

Every repository file is read by read_bytes (regular files only, within a size limit).
Untouched bytes must stay as they were, so text is decoded as stored and split on LF only,
the way `git grep -n` numbers lines: a CR before the LF is part of the ending. The YAML
helpers serve the line scanners of image/ and recipes/, which keep quotes, comments and key
order. Imported by `image check` (start-up budgeted): only `os`, `re` and `stat`.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import NamedTuple

MIB = 1 << 20
# What uvdock reads from a repository, by kind: a uv.lock of a large project is a few MiB;
# Dockerfiles, recipes, workflow YAML, pyproject.toml, requirement lists and saved state are
# kilobytes. The limits are far above both and far below what would hurt.
LOCK_LIMIT = 64 * MIB
TEXT_LIMIT = 4 * MIB
_KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}  # fmt: skip

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


def read_bytes(path: Path, limit: int = TEXT_LIMIT) -> bytes:
    """The one way uvdock reads a file of the repository: a regular file (a symlink is
    followed) of at most `limit` bytes. A device (a link to /dev/zero), a FIFO, a socket or
    a longer file is refused at once (exit 2) naming it, so a committed file can neither
    hang uvdock nor fill its memory. Other failures raise OSError for callers to word
    (FileNotFoundError for an absent file, IsADirectoryError for a folder)."""
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "Is a directory", str(path))
    _require_regular(path, info)
    # The stat came first, so a committed FIFO is refused before an open could wait for a
    # writer; fstat checks the very file opened (only a local race could swap it).
    with open(path, "rb", buffering=0) as fh:
        _require_regular(path, os.fstat(fh.fileno()), limit)
        chunks: list[bytes] = []
        size = 0
        while chunk := fh.read(min(MIB, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # it grew since the fstat
                _require_regular(path, os.fstat(fh.fileno()), limit, size)
    return b"".join(chunks)


def read_text(
    path: Path, limit: int = TEXT_LIMIT, *, errors: str = "strict", newlines: bool = False
) -> str:
    """The file's text exactly as stored (CRLF kept), through read_bytes; `newlines`: every
    line ending as "\n", as Python's text mode reads it. Raises OSError, and with strict
    `errors` UnicodeDecodeError, for callers to word (each says what the file is)."""
    text = read_bytes(path, limit).decode("utf-8", errors=errors)
    return text.replace("\r\n", "\n").replace("\r", "\n") if newlines else text


def regular_file(path: Path, limit: int = TEXT_LIMIT) -> bool:
    """Path.is_file() for a file uvdock will read or hand on: False when absent (or a folder,
    or a symlink loop), True for a regular file within `limit`, refused (exit 2) otherwise."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    if stat.S_ISDIR(info.st_mode):
        return False
    _require_regular(path, info, limit)
    return True


def _require_regular(path: Path, info: os.stat_result, limit: int = 0, size: int = 0) -> None:
    from uvdock.errors import InputRefused

    if not stat.S_ISREG(info.st_mode):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a file")
        raise InputRefused(
            f"{path}: {kind}, not a regular file; uvdock reads only regular files from a repository"
        )
    if limit:
        require_within(str(path), max(size, info.st_size), limit)


def require_within(what: str, size: int, limit: int) -> None:
    from uvdock.errors import InputRefused

    if size > limit:
        raise InputRefused(
            f"{what}: larger than the {limit // MIB} MiB uvdock reads from a file of its kind"
        )


def split_lines(text: str) -> list[Line]:
    """The text's lines; joining their `text` gives the text back. No line after a final LF."""
    pieces = text.split("\n")
    last = pieces.pop()  # what follows the final LF: "" or a line without an ending
    lines: list[Line] = []
    offset = 0
    for number, piece in enumerate(pieces, 1):
        crlf = piece.endswith("\r")
        lines.append(Line(number, offset, piece[:-1] if crlf else piece, "\r\n" if crlf else "\n"))
        offset += len(piece) + 1
    if last:
        lines.append(Line(len(pieces) + 1, offset, last, ""))
    return lines


def join_lines(lines: list[Line]) -> str:
    return "".join(line.text for line in lines)


def ending_of(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""


def unquote(text: str) -> str:
    """A YAML scalar or key without its surrounding blanks and 'single' or "double" quotes."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text
