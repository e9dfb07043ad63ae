"""Test recipes (`tests/test_utils/recipes/**/*.yaml`): where each test case runs.

A recipe has a top-level `products:` list of entries (`- test_case: [name, ...]`), each with
a nested `products:` list of rows (`environment: [...]`, `scope: [...]`, optional
`platforms: [...]`; a row without platforms inherits the spec's). No YAML library is used:
the edits in recipes/mark.py must keep every untouched byte, so the scanner works on the
lines themselves and records where each entry, row and key sits.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.files.textlines import YAML_KEY_LINE, ending_of, read_text, split_lines, unquote

# A one-line flow list: text up to and including "[", the items, "]", then the tail; and one
# item of it: quoted runs (commas inside them included) and unquoted characters.
_FLOW_LIST = re.compile(r"^(?P<prefix>[^\[#]*\[)(?P<raw>[^\]#]*)\](?P<tail>.*)$")
_FLOW_ITEM = re.compile(r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,"'])+""")

# A comment: "#" at the start of a value or after a blank.
_COMMENT = re.compile(r"(?:^|[ \t])#")


def body_of(line: str) -> str:
    return line[: len(line) - len(ending_of(line))]


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


class FlowList(NamedTuple):
    """`key: [a, b]  # tail` split so that it can be rebuilt with other items."""

    prefix: str  # indentation, key and "[" (the dash too on an item's first line)
    raw: str  # the text between the brackets, as written
    tail: str  # everything after "]": spaces, a comment, markers

    @property
    def items(self) -> tuple[str, ...]:
        return tuple(unquote(i) for i in self.raw_items)

    @property
    def raw_items(self) -> tuple[str, ...]:
        # A comma inside quotes (`["mr,x", nightly]`) is part of the item, as YAML reads it.
        return tuple(m[0].strip() for m in _FLOW_ITEM.finditer(self.raw) if m[0].strip())

    def with_raw(self, raw: str, tail: str | None = None) -> str:
        return f"{self.prefix}{raw}]{self.tail if tail is None else tail}"


def flow_list(body: str) -> FlowList | None:
    match = _FLOW_LIST.match(body)
    if match is None:
        return None
    tail = match["tail"]
    if tail.strip() and not tail.lstrip().startswith("#"):
        return None
    return FlowList(match["prefix"], match["raw"], tail)


class Row(NamedTuple):
    """One `- environment: ...` item of an entry's products list. Line numbers are 0-based."""

    start: int
    end: int  # exclusive; after the last content line (trailing comments are not the row's)
    key_column: int
    keys: dict[str, int]  # direct key -> line index
    environments: tuple[str, ...]
    scopes: tuple[str, ...]
    platforms: tuple[str, ...]  # effective: the row's own or else the spec's

    @property
    def scope_line(self) -> int | None:
        return self.keys.get("scope")


class Entry(NamedTuple):
    start: int
    end: int
    key_column: int
    case_line: int
    cases: tuple[str, ...]
    rows: tuple[Row, ...]


class Recipe(NamedTuple):
    path: Path
    display: str
    lines: list[str]
    spec_platforms: tuple[str, ...]
    entries: tuple[Entry, ...]

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def entries_of(self, case: str) -> list[Entry]:
        return [e for e in self.entries if case in e.cases]


def _block_end(lines: Sequence[str], start: int, parent_indent: int) -> int:
    """Index after the last content line deeper than parent_indent, from start on."""
    end = start
    for index in range(start, len(lines)):
        line = lines[index]
        if not is_content(line):
            continue
        if indent_of(line) <= parent_indent:
            break
        end = index + 1
    return end


def _items(lines: Sequence[str], start: int, stop: int) -> list[tuple[int, int, int]]:
    """The `- ` items of the block sequence from line `start` on: (start, end, key column)."""
    items: list[tuple[int, int, int]] = []
    item_indent = -1
    index = start
    while index < stop:
        line = lines[index]
        if not is_content(line):
            index += 1
            continue
        indent = indent_of(line)
        stripped = line.lstrip(" ")
        if item_indent < 0:
            item_indent = indent
        if indent != item_indent or not stripped.startswith("-"):
            break
        match = YAML_KEY_LINE.fullmatch(body_of(line))
        key_column = indent + len(match["dash"]) if match and match["dash"] else indent + 2
        end = max(index + 1, _block_end(lines, index + 1, item_indent))
        end = min(end, stop)
        items.append((index, end, key_column))
        index = end
    return items


def _keys(lines: Sequence[str], start: int, end: int, key_column: int) -> dict[str, int]:
    keys: dict[str, int] = {}
    for index in range(start, end):
        match = YAML_KEY_LINE.fullmatch(body_of(lines[index]))
        if match is None:
            continue
        column = len(match["indent"]) + len(match["dash"] or "")
        if column == key_column and (index == start or not match["dash"]):
            keys[unquote(match["key"])] = index  # a duplicate key: YAML reads the last one
    return keys


def _list_value(lines: Sequence[str], index: int | None) -> tuple[str, ...]:
    if index is None:
        return ()
    body = body_of(lines[index])
    parsed = flow_list(body)
    if parsed is not None:
        return parsed.items
    match = YAML_KEY_LINE.fullmatch(body)
    if match is None:
        return ()
    value = _COMMENT.split(match["rest"], maxsplit=1)[0].strip()
    if value:
        return (unquote(value),)
    return _block_list(lines, index + 1, len(match["indent"]) + len(match["dash"] or ""))


def _block_list(lines: Sequence[str], start: int, key_column: int) -> tuple[str, ...]:
    """The `- item` lines under a key (YAML lets them sit at the key's own column)."""
    items: list[str] = []
    item_column = -1
    for line in lines[start:]:
        if not is_content(line):
            continue
        stripped = body_of(line).lstrip(" ")
        column = indent_of(line)
        if column < key_column or (items and column != item_column):
            break
        if not stripped.startswith("- "):
            break
        item_column = column
        items.append(unquote(_COMMENT.split(stripped[2:], maxsplit=1)[0]))
    return tuple(items)


def _top_level(lines: Sequence[str], key: str) -> int | None:
    """The line of a top-level key; the last one when it is given twice, as YAML reads it."""
    found = [i for i, line in enumerate(lines) if line.startswith(f"{key}:")]
    return found[-1] if found else None


def parse(path: Path, display: str, text: str) -> Recipe:
    lines = [line.text for line in split_lines(text)]
    spec_platforms: tuple[str, ...] = ()
    spec = _top_level(lines, "spec")
    if spec is not None:
        end = _block_end(lines, spec + 1, 0)
        children = [i for i in range(spec + 1, end) if is_content(lines[i])]
        if children:
            column = indent_of(lines[children[0]])
            spec_keys = _keys(lines, spec + 1, end, column)
            spec_platforms = _list_value(lines, spec_keys.get("platforms"))
    entries: list[Entry] = []
    products = _top_level(lines, "products")
    if products is not None:
        # The sequence may sit at column 0 too, so it ends at the next top-level key.
        stop = len(lines)
        for index in range(products + 1, len(lines)):
            line = lines[index]
            if is_content(line) and indent_of(line) == 0 and not line.startswith("-"):
                stop = index
                break
        for start, end, column in _items(lines, products + 1, stop):
            entry = _entry(lines, start, end, column, spec_platforms)
            if entry is not None:
                entries.append(entry)
    return Recipe(path, display, lines, spec_platforms, tuple(entries))


def _entry(
    lines: Sequence[str], start: int, end: int, column: int, spec_platforms: tuple[str, ...]
) -> Entry | None:
    keys = _keys(lines, start, end, column)
    case_line = keys.get("test_case")
    if case_line is None:
        return None
    rows: list[Row] = []
    nested = keys.get("products")
    if nested is not None:
        for row_start, row_end, row_column in _items(lines, nested + 1, end):
            row_keys = _keys(lines, row_start, row_end, row_column)
            own_platforms = _list_value(lines, row_keys.get("platforms"))
            rows.append(
                Row(
                    start=row_start,
                    end=row_end,
                    key_column=row_column,
                    keys=row_keys,
                    environments=_list_value(lines, row_keys.get("environment")),
                    scopes=_list_value(lines, row_keys.get("scope")),
                    platforms=own_platforms or spec_platforms,
                )
            )
    return Entry(start, end, column, case_line, _list_value(lines, case_line), tuple(rows))


def recipe_paths(repo: Path, recipes_dir: str) -> list[Path]:
    root = repo / recipes_dir
    if not root.is_dir():
        raise InputRefused(
            f"no recipes directory {recipes_dir} in {repo}",
            hint="set recipes-dir in [tool.uvdock] or uvdock.toml",
        )
    # os.walk rather than Path.rglob: several times faster, and start-up time is a budget
    found = [
        os.path.join(folder, name)
        for folder, _, names in os.walk(root)
        for name in names
        if name.endswith((".yaml", ".yml"))
    ]
    return [Path(p) for p in sorted(found)]


def load(repo: Path, recipes_dir: str, case: str | None = None) -> list[Recipe]:
    """Parse the recipes; with `case`, only those whose text mentions it (a cheap pre-filter)."""
    recipes: list[Recipe] = []
    for path in recipe_paths(repo, recipes_dir):
        text = _read(path)
        if case is not None and case not in text:
            continue
        recipes.append(parse(path, path.relative_to(repo).as_posix(), text))
    return recipes


def _read(path: Path) -> str:
    try:
        return read_text(path)
    except UnicodeDecodeError as exc:
        raise InputRefused(
            f"{path}: not UTF-8 text (byte {exc.start}); nothing was changed"
        ) from None


def all_cases(recipes: Iterable[Recipe]) -> list[str]:
    return sorted({c for r in recipes for e in r.entries for c in e.cases})


def require_case(repo: Path, recipes_dir: str, case: str) -> list[Recipe]:
    """The recipes that run `case`; an unknown name is refused with the closest ones."""
    recipes = [r for r in load(repo, recipes_dir, case) if r.entries_of(case)]
    if recipes:
        return recipes
    import difflib

    names = all_cases(load(repo, recipes_dir))
    close = difflib.get_close_matches(case, names, n=5, cutoff=0.6)
    hint = f"closest: {', '.join(close)}" if close else f"no similar name among {len(names)} cases"
    raise InputRefused(f"unknown test case `{case}` in {recipes_dir}", hint=hint)
