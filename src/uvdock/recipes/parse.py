"""Test recipes (`tests/test_utils/recipes/**/*.yaml`): where each test case runs.

A recipe has a top-level `products:` list of entries (`- test_case: [name, ...]`), each with
a nested `products:` list of rows (`environment: [...]`, `scope: [...]`, optional
`platforms: [...]`; a row without platforms inherits the spec's). PyYAML's node positions
(formats/yaml.py) say where each entry, row and key sits; the edits in recipes/mark.py then
change those lines and keep every untouched byte.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from uvdock.errors import InputRefused
from uvdock.files.textlines import ending_of, read_text, split_lines, unquote
from uvdock.formats.yaml import compose, is_scalar, paused_collector

# A one-line flow list: text up to and including "[", the items, "]", then the tail; and one
# item of it: quoted runs (commas inside them included) and unquoted characters.
_FLOW_LIST = re.compile(r"^(?P<prefix>[^\[#]*\[)(?P<raw>[^\]#]*)\](?P<tail>.*)$")
_FLOW_ITEM = re.compile(r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,"'])+""")


def body_of(line: str) -> str:
    return line[: len(line) - len(ending_of(line))]


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


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


# PyYAML refuses the control characters a case name may hold (`recipe show` and completion
# show them escaped): each is read as one private-use character, so positions stay.
_CONTROLS = {
    c: 0xF0000 + c for c in (*range(0x20), *range(0x7F, 0xA0)) if chr(c) not in "\t\n\r\x85"
}
_BACK = {to: c for c, to in _CONTROLS.items()}


class _Positions:
    """Line and column of a node's marks, counted on "\n" as the editors count lines (PyYAML
    also breaks lines on a lone CR, NEL and U+2028)."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def line(self, mark: Any) -> int:
        return bisect.bisect_right(self.starts, mark.index) - 1

    def column(self, mark: Any) -> int:
        return int(mark.index) - self.starts[self.line(mark)]

    def last_line(self, node: Any) -> int:
        """The line of the node's last character (a block collection ends where the next begins,
        so its last value's last line is its own)."""
        while isinstance(node.value, list) and node.value and not node.flow_style:
            last = node.value[-1]
            node = last[1] if isinstance(last, tuple) else last
        end = node.end_mark
        line = self.line(end)
        return (
            line - 1
            if end.index == self.starts[line] and end.index > node.start_mark.index
            else line
        )


def _keyed(node: Any) -> dict[str, tuple[Any, Any]]:
    """A block mapping's (key, value) nodes by key; the last of duplicate keys, as YAML reads
    it. A flow mapping has none the line editors can edit."""
    if type(node).__name__ != "MappingNode" or node.flow_style:
        return {}
    return {k.value: (k, v) for k, v in node.value if is_scalar(k) and isinstance(k.value, str)}


def _values(found: tuple[Any, Any] | None) -> tuple[str, ...]:
    """A list of strings, or one string, as YAML reads it."""
    node = found[1] if found else None
    if node is None or type(node).__name__ == "MappingNode":
        return ()
    if is_scalar(node):
        return (node.value.translate(_BACK),) if node.value else ()
    return tuple(item.value.translate(_BACK) for item in node.value if is_scalar(item))


def _items(node: tuple[Any, Any] | None) -> list[Any]:
    """The mapping items of a block sequence."""
    if node is None or type(node[1]).__name__ != "SequenceNode" or node[1].flow_style:
        return []
    return [item for item in node[1].value if type(item).__name__ == "MappingNode" and item.value]


def parse(path: Path, display: str, text: str) -> Recipe:
    lines = [line.text for line in split_lines(text)]
    with paused_collector():
        documents = compose(text.translate(_CONTROLS), display) or [None]
        spec_platforms, entries = _entries(_Positions(text), _keyed(documents[0]))
    return Recipe(path, display, lines, spec_platforms, entries)


def _entries(at: _Positions, top: dict[str, Any]) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    spec_platforms = _values(_keyed((top.get("spec") or (None, None))[1]).get("platforms"))
    entries: list[Entry] = []
    for item in _items(top.get("products")):
        keys = _keyed(item)
        if "test_case" not in keys:
            continue
        rows = []
        for node in _items(keys.get("products")):
            own = _keyed(node)
            rows.append(
                Row(
                    *_block(at, node),
                    keys={name: at.line(key.start_mark) for name, (key, _) in own.items()},
                    environments=_values(own.get("environment")),
                    scopes=_values(own.get("scope")),
                    platforms=_values(own.get("platforms")) or spec_platforms,
                )
            )
        case_line = at.line(keys["test_case"][0].start_mark)
        cases = _values(keys["test_case"])
        entries.append(Entry(*_block(at, item), case_line, cases, tuple(rows)))
    return spec_platforms, tuple(entries)


def _block(at: _Positions, node: Any) -> tuple[int, int, int]:
    """(first line, line after the last, key column) of a mapping item of a block sequence."""
    return at.line(node.start_mark), at.last_line(node) + 1, at.column(node.value[0][0].start_mark)


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
