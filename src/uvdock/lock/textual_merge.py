"""Prefer git's own bytes when they mean what the structured merge decided.

The structured merge (pyproject_merge) gets the data right but rebuilds text through
tomlkit: comments and blank lines a side added next to what it changed, and a side's own
reflowing of a list, can be lost. git's textual merge keeps every line as a side wrote it.
So, given git's `git merge-file -p` output for the same three versions (the command runs
git and passes the text in; nothing here starts a process):

- git's result is clean and tomllib reads the same data from it: git's bytes win;
- git left conflicted hunks: each hunk is resolved by keeping both sides' own lines (ours
  then theirs, or theirs then ours); the first combination whose data equals the
  structured result wins, so both sides' comments and formatting stay. One side's lines
  alone are never taken: that would drop the other side's text, which the structured
  merge keeps better (it carries reflowed lists and added comments);
- nothing fits: the structured text, as before.

Data is compared with tomllib, which is what uv reads, so a winner is valid TOML.
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass
from typing import Any

MARKER_SIZE = 41  # the -p run's marker length: longer than anything a TOML file holds
_OPEN, _MIDDLE, _CLOSE = "<" * MARKER_SIZE, "=" * MARKER_SIZE, ">" * MARKER_SIZE
_MAX_SEARCHED_HUNKS = 6  # 2**6 combinations at most; beyond that only uniform choices
_ORDERS = ("ours+theirs", "theirs+ours")


@dataclass(frozen=True)
class Textual:
    """What `git merge-file -p --marker-size=MARKER_SIZE` printed and whether it was clean."""

    text: str
    clean: bool


Hunk = tuple[str, str]  # (ours' lines, theirs' lines) of one conflicted hunk
Piece = str | Hunk


def _data(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def split_hunks(text: str) -> list[Piece] | None:
    """git's output as plain text and conflicted hunks; None when the markers are not the
    plain two-sided shape this module asked git for."""
    pieces: list[Piece] = []
    plain: list[str] = []
    ours: list[str] = []
    theirs: list[str] = []
    state = "plain"
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if state == "plain" and bare.startswith(_OPEN):
            pieces.append("".join(plain))
            plain, ours, theirs, state = [], [], [], "ours"
        elif state == "ours" and bare == _MIDDLE:
            state = "theirs"
        elif state == "theirs" and bare.startswith(_CLOSE):
            pieces.append(("".join(ours), "".join(theirs)))
            state = "plain"
        elif bare.startswith((_OPEN, _MIDDLE, _CLOSE)):
            return None
        else:
            {"plain": plain, "ours": ours, "theirs": theirs}[state].append(line)
    if state != "plain":
        return None
    pieces.append("".join(plain))
    return pieces


def _resolve(hunk: Hunk, order: str) -> str | None:
    ours, theirs = hunk
    first, second = (ours, theirs) if order == "ours+theirs" else (theirs, ours)
    if first and not first.endswith("\n"):
        return None  # a side's last line without its newline: no clean concatenation
    return first + second


def _combinations(count: int) -> list[tuple[str, ...]]:
    uniform = [(order,) * count for order in _ORDERS]
    if count > _MAX_SEARCHED_HUNKS:
        return uniform
    rest = [c for c in itertools.product(_ORDERS, repeat=count) if c not in uniform]
    return uniform + rest


def resolve_hunks(pieces: list[Piece], wanted: dict[str, Any]) -> str | None:
    """The first resolution of every hunk from the sides' own lines that reads as `wanted`."""
    hunks = [p for p in pieces if not isinstance(p, str)]
    for orders in _combinations(len(hunks)):
        chosen = iter(orders)
        parts: list[str] = []
        for piece in pieces:
            resolved = piece if isinstance(piece, str) else _resolve(piece, next(chosen))
            if resolved is None:
                break
            parts.append(resolved)
        else:
            text = "".join(parts)
            if _data(text) == wanted:
                return text
    return None


def prefer_git_bytes(structured: str, textual: Textual) -> tuple[str, str]:
    """(text, via): git's bytes when they mean the same as the structured merge's text."""
    wanted = _data(structured)
    if wanted is None:
        return structured, "uvdock"
    if textual.clean:
        return (textual.text, "git") if _data(textual.text) == wanted else (structured, "uvdock")
    pieces = split_hunks(textual.text)
    if pieces is None:
        return structured, "uvdock"
    resolved = resolve_hunks(pieces, wanted)
    return (resolved, "git-hunks") if resolved is not None else (structured, "uvdock")
