"""Mapping items of YAML block sequences (GitLab `parallel: matrix:` rows), read line by line:
a YAML library would lose what an edit keeps (quotes, comments, CRLF, key order) and costs
`image check` start-up time; a bump re-reads its result with PyYAML (image/matrix_verify.py).
Each value keeps its exact span, so an edit replaces the value and nothing else."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from uvdock.files.textlines import YAML_KEY_LINE, Line, split_lines, unquote

# Bare scalars starting with these are flow collections, block scalars, anchors, aliases or tags.
_NOT_A_PLAIN_SCALAR = tuple("{[|>&*!%@`")
# A closed 'single' ('' is a quote) or "double" (\ escapes) quoted scalar.
_QUOTED = re.compile(r"'(?P<single>(?:[^']|'')*)'(?!')|\"(?P<double>(?:[^\"\\]|\\.)*)\"")


class Scalar(NamedTuple):
    value: str  # unquoted
    line: int  # 1-based
    start: int  # span of the value in the text (inside the quotes, if any)
    end: int


class Item(NamedTuple):
    line: int  # 1-based line of the dash
    fields: dict[str, Scalar]


def _scalar(line: Line, match: re.Match[str]) -> Scalar | None:
    """The value after `KEY:`; None for none (a nested block, a flow collection, ...)."""
    rest, start = match["rest"], line.offset + match.start("rest")
    if rest[:1] in ("'", '"'):
        if (quoted := _QUOTED.match(rest)) is None:
            return None
        single = quoted["single"]
        value = quoted["double"] if single is None else single.replace("''", "'")
        return Scalar(value, line.number, start + 1, start + quoted.end() - 1)
    if not rest or rest.startswith(("#", *_NOT_A_PLAIN_SCALAR)):
        return None
    comment = re.search(r"[ \t]#", rest)
    value = (rest[: comment.start()] if comment else rest).rstrip(" \t")
    return Scalar(value, line.number, start, start + len(value))


def _sibling_keys(following: list[Line], column: int) -> Iterator[tuple[Line, re.Match[str]]]:
    """The key lines after an item's first one at its key column, until the item ends."""
    for line in following:
        stripped = line.content.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue  # blank lines and comments never end an item
        indent = len(line.content) - len(stripped)
        if indent < column:
            return
        if indent > column or stripped.startswith("- ") or stripped == "-":
            continue  # nested under an earlier key (a sequence may sit at the key's column)
        if (sibling := YAML_KEY_LINE.fullmatch(line.content)) is None or sibling["dash"]:
            return
        yield line, sibling


# A block scalar's header after `key:` or `- `: `|` or `>`, indicators, an optional comment.
_BLOCK_HEADER = re.compile(r"[|>][0-9+\-]*[ \t]*(?:#.*)?")
_DASH_BLOCK = re.compile(r"(?P<indent>[ ]*)-[ ]+" + _BLOCK_HEADER.pattern)


def _block_scalar_lines(lines: list[Line]) -> set[int]:
    """Indexes of the lines inside block scalars (`script: |`): text, never rows or keys."""
    inside: set[int] = set()
    parent = -1  # the indentation of the node that owns the open block scalar, or -1
    for index, line in enumerate(lines):
        stripped = line.content.lstrip(" ")
        indent = len(line.content) - len(stripped)
        if parent >= 0:
            if not stripped or indent > parent:
                inside.add(index)
                continue
            parent = -1
        key = YAML_KEY_LINE.fullmatch(line.content)
        dash = _DASH_BLOCK.fullmatch(line.content)
        if key is not None and _BLOCK_HEADER.fullmatch(key["rest"]):
            parent = len(key["indent"]) + len(key["dash"] or "")
        elif dash is not None:
            parent = len(dash["indent"])
    return inside


def sequence_items(text: str) -> list[Item]:
    """Every mapping item of every block sequence in the text; a key given twice: the last."""
    lines = split_lines(text)
    items: list[Item] = []
    text_lines = _block_scalar_lines(lines)
    for index, line in enumerate(lines):
        match = YAML_KEY_LINE.fullmatch(line.content)
        if index in text_lines or match is None or not match["dash"]:
            continue
        column = len(match["indent"]) + len(match["dash"])
        fields: dict[str, Scalar] = {}
        for key_line, key_match in [(line, match), *_sibling_keys(lines[index + 1 :], column)]:
            key, scalar = unquote(key_match["key"]), _scalar(key_line, key_match)
            if scalar is None:
                fields.pop(key, None)  # the last value is not a scalar this scanner can edit
            else:
                fields[key] = scalar
        items.append(Item(line.number, fields))
    return items
