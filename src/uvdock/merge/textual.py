"""Prefer git's own bytes when they mean what the structured merge decided.

tomlkit can lose comments, blank lines and reflowing a side wrote; git's `merge-file -p
--diff3` output (passed in) keeps them. Its clean result wins when tomllib (uv) reads the
same data from it. Its conflicted hunks are resolved from both sides' own lines (their
changes applied to the base lines, or one side's after the other's; never one side alone,
which would drop the other's text): the first that reads as the decision wins. Else the
structured text wins, with the comment lines theirs wrote above what it added put back.
"""

from __future__ import annotations

import itertools
import tomllib
from difflib import SequenceMatcher
from typing import Any, NamedTuple

MARKER_SIZE = 41  # the -p run's marker length: longer than anything a TOML file holds
_OPEN, _BASE, _MIDDLE, _CLOSE = (char * MARKER_SIZE for char in "<|=>")
# Marker -> {state it may come in: the state it opens}.
_MOVES = {_OPEN: {"plain": "ours"}, _BASE: {"ours": "base"},
          _MIDDLE: {"ours": "theirs", "base": "theirs"}, _CLOSE: {"theirs": "plain"}}  # fmt: skip
_MAX_SEARCHED_HUNKS = 3  # 4**3 combinations at most; beyond that only uniform choices
_ORDERS = ("lines:ours", "lines:theirs", "ours+theirs", "theirs+ours")


class Textual(NamedTuple):
    # What `git merge-file -p --diff3 --marker-size=MARKER_SIZE` printed; clean or not.
    text: str
    clean: bool


Hunk = tuple[str, str, str]  # (ours', base's, theirs' lines) of one conflicted hunk
Piece = str | Hunk


def _data(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except ValueError:  # TOMLDecodeError, or an integer too long for Python to read
        return None


def split_hunks(text: str) -> list[Piece] | None:
    """git's output as plain text and conflicted hunks; None unless it has diff3's shape."""
    pieces: list[Piece] = []
    parts: dict[str, list[str]] = {"plain": [], "ours": [], "base": [], "theirs": []}
    state = "plain"
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if (marker := next((m for m in _MOVES if bare.startswith(m)), None)) is None:
            parts[state].append(line)
            continue
        following = _MOVES[marker].get(state)
        if following is None or (marker == _MIDDLE and bare != _MIDDLE):
            return None
        if marker in (_OPEN, _CLOSE):
            ours, base, theirs = ("".join(parts[p]) for p in ("ours", "base", "theirs"))
            pieces.append("".join(parts["plain"]) if marker == _OPEN else (ours, base, theirs))
            parts = {key: [] for key in parts}
        state = following
    return [*pieces, "".join(parts["plain"])] if state == "plain" else None


def line_changes(base: list[str], side: list[str]) -> list[tuple[int, int, list[str]]]:
    """One side's line changes of `base`: (start, end in base, the lines put there)."""
    opcodes = SequenceMatcher(None, base, side, autojunk=False).get_opcodes()
    return [(i1, i2, side[j1:j2]) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]


def _touch(a: tuple[int, int, list[str]], b: tuple[int, int, list[str]]) -> bool:
    """Two changes on the same base lines (an insertion inside the other's range counts)."""
    if a[0] == a[1] or b[0] == b[1]:
        return a[0] == b[0] == a[1] == b[1] or (b[0] < a[0] < b[1]) or (a[0] < b[0] < a[1])
    return max(a[0], b[0]) < min(a[1], b[1])


def _interleave(hunk: Hunk, ours_first: bool) -> str | None:
    """Both sides' line changes applied to the hunk's base lines, when none touch the same."""
    ours, base, theirs = (part.splitlines(keepends=True) for part in hunk)
    mine, other = line_changes(base, ours), line_changes(base, theirs)
    if not base or any(_touch(a, b) for a in mine for b in other):
        return None
    first, second = (mine, other) if ours_first else (other, mine)
    # At one base line, a pure insertion goes first (its side put it before that line),
    # then the first side's change.
    ordered = sorted([(c, 0) for c in first] + [(c, 1) for c in second],
                     key=lambda item: (item[0][0], item[0][0] != item[0][1], item[1]))  # fmt: skip
    out: list[str] = []
    position = 0
    for (start, end, lines), _ in ordered:
        out += base[position:start] + lines
        position = max(position, end)
    out += base[position:]
    return "".join(out) if all(line.endswith("\n") for line in out[:-1]) else None


def _resolve(hunk: Hunk, order: str) -> str | None:
    if order.startswith("lines:"):
        return _interleave(hunk, order == "lines:ours")
    ours, _, theirs = hunk
    first, second = (ours, theirs) if order == "ours+theirs" else (theirs, ours)
    if first and not first.endswith("\n"):
        return None  # a side's last line without its newline: no clean concatenation
    comments = {line.strip() for line in ours.splitlines() if line.strip().startswith("#")}
    if any(line.strip() in comments for line in theirs.splitlines()):
        return None  # the comment would be there twice; data cannot tell
    return first + second


def _combinations(count: int) -> list[tuple[str, ...]]:
    """Uniform choices first (in _ORDERS' order), then every mix when there are few hunks."""
    if count > _MAX_SEARCHED_HUNKS:
        return [(order,) * count for order in _ORDERS]
    return sorted(itertools.product(_ORDERS, repeat=count), key=lambda c: len(set(c)) > 1)


def resolve_hunks(pieces: list[Piece], wanted: dict[str, Any]) -> str | None:
    """The first resolution of every hunk from the sides' own lines that reads as `wanted`."""
    for orders in _combinations(sum(not isinstance(p, str) for p in pieces)):
        chosen = iter(orders)
        parts = [p if isinstance(p, str) else _resolve(p, next(chosen)) for p in pieces]
        text = "".join(part or "" for part in parts)
        if None not in parts and _data(text) == wanted:
            return text
    return None


def prefer_git_bytes(wanted: dict[str, Any], structured: str, textual: Textual) -> tuple[str, str]:
    """(text, via): git's bytes when they mean `wanted`, else the structured text."""
    if textual.clean:
        found, via = (textual.text if _data(textual.text) == wanted else None), "git"
    else:
        pieces = split_hunks(textual.text)
        found, via = (resolve_hunks(pieces, wanted) if pieces else None), "git-hunks"
    return (found, via) if found is not None else (structured, "uvdock")


def whole_file_conflict(texts: list[str], marker_size: int) -> str:
    """base, ours, theirs as one diff3 conflict, for when no merged text means the decision."""
    base, ours, theirs = (t if not t or t.endswith("\n") else t + "\n" for t in texts)
    size = max(marker_size, 7)
    return (
        f"{'<' * size} ours\n{ours}{'|' * size} base\n{base}{'=' * size}\n"
        f"{theirs}{'>' * size} theirs\n"
    )


def carry_comments(merged: str, base: str, theirs: str) -> str:
    """`merged` with the comment lines theirs wrote above a line it added put back, if that
    line appears once and the result means the same."""
    lines = merged.splitlines(keepends=True)
    base_lines, their_lines = base.splitlines(keepends=True), theirs.splitlines(keepends=True)
    for _, _, block in line_changes(base_lines, their_lines):
        comments: list[str] = []
        for content in block:
            if not content.strip() or content.strip().startswith("#"):
                comments.append(content)
                continue
            at = lines.index(content) if lines.count(content) == 1 else -1
            # One place to put them, and they are not in the text already.
            fits = at >= 0 and lines[max(0, at - len(comments)) : at] != comments
            if comments and fits and not any(c.strip() and c in lines for c in comments):
                lines[at:at] = comments
            comments = []
    text = "".join(lines)
    if text == merged or (meant := _data(merged)) is None:
        return merged
    return text if _data(text) == meant else merged
