"""Test recipes (`tests/test_utils/recipes/**/*.yaml`): where each test case runs.

A recipe's top-level `products:` lists entries (`- test_case: [name, ...]`), each with a
`products:` list of rows (`environment`, `scope`, optional `platforms`, else the spec's).
PyYAML's node positions say where each entry, row and key sits, for the line editors.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from uvdock.errors import InputRefused
from uvdock.files.edit import read_text
from uvdock.files.textlines import ending_of, split_lines, unquote
from uvdock.formats.yaml import compose, is_scalar, paused_collector

# A one-line flow list: text up to and including "[", the items, "]", then spaces and a comment;
# and one item of it: quoted runs (commas inside them included) and unquoted characters.
_FLOW_LIST = re.compile(r"^([^\[#]*\[)([^\]#]*)\](\s*(?:#.*)?)$")
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
    def raw_items(self) -> tuple[str, ...]:
        # A comma inside quotes (`["mr,x", nightly]`) is part of the item, as YAML reads it.
        return tuple(m[0].strip() for m in _FLOW_ITEM.finditer(self.raw) if m[0].strip())

    @property
    def pairs(self) -> list[tuple[str, str]]:  # (item as YAML reads it, item as written)
        return [(unquote(raw), raw) for raw in self.raw_items]

    def with_raw(self, raw: str, tail: str | None = None) -> str:
        return f"{self.prefix}{raw}]{self.tail if tail is None else tail}"


def flow_list(body: str) -> FlowList | None:
    match = _FLOW_LIST.match(body)
    return FlowList(*match.groups()) if match else None


class Row(NamedTuple):  # line numbers are 0-based
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

    def block(self, node: Any) -> tuple[int, int, int]:
        """(first line, line after the last, key column) of a mapping item of a block sequence.
        A block collection ends where the next begins: its last value's last line is its own."""
        first, key = self.line(node.start_mark), node.value[0][0].start_mark
        column = int(key.index) - self.starts[self.line(key)]
        while isinstance(node.value, list) and node.value and not node.flow_style:
            last = node.value[-1]
            node = last[1] if isinstance(last, tuple) else last
        end, line = node.end_mark, self.line(node.end_mark)
        at_start = end.index == self.starts[line] and end.index > node.start_mark.index
        return first, line - at_start + 1, column


def _keyed(node: Any) -> dict[str, tuple[Any, Any]]:
    """A block mapping's (key, value) nodes by key, the last of duplicates winning as in YAML.
    A flow mapping has none the line editors can edit."""
    if type(node).__name__ != "MappingNode" or node.flow_style:
        return {}
    return {k.value: (k, v) for k, v in node.value if is_scalar(k) and isinstance(k.value, str)}


def _values(found: tuple[Any, Any] | None) -> tuple[str, ...]:
    node: Any = found[1] if found else None
    if is_scalar(node):
        return (node.value.translate(_BACK),) if node.value else ()
    many = type(node).__name__ == "SequenceNode"
    return tuple(i.value.translate(_BACK) for i in node.value if is_scalar(i)) if many else ()


def _items(node: tuple[Any, Any] | None) -> list[Any]:
    if node is None or type(node[1]).__name__ != "SequenceNode" or node[1].flow_style:
        return []
    return [item for item in node[1].value if type(item).__name__ == "MappingNode" and item.value]


def parse(path: Path, display: str, text: str) -> Recipe:
    lines = [line.text for line in split_lines(text)]
    with paused_collector():  # no collector passes over the growing node graph
        top = _keyed((compose(text.translate(_CONTROLS), display) or [None])[0])
        at = _Positions(text)
        spec_platforms = _values(_keyed((top.get("spec") or (None, None))[1]).get("platforms"))
        entries: list[Entry] = []
        for item in _items(top.get("products")):
            keys = _keyed(item)
            if "test_case" not in keys:
                continue
            rows = []
            for node in _items(keys.get("products")):
                own = _keyed(node)
                keys_at = {name: at.line(key.start_mark) for name, (key, _) in own.items()}
                environments, scopes = _values(own.get("environment")), _values(own.get("scope"))
                platforms = _values(own.get("platforms")) or spec_platforms
                rows.append(Row(*at.block(node), keys_at, environments, scopes, platforms))
            case_line = at.line(keys["test_case"][0].start_mark)
            cases = _values(keys["test_case"])
            entries.append(Entry(*at.block(item), case_line, cases, tuple(rows)))
        return Recipe(path, display, lines, spec_platforms, tuple(entries))


def load(repo: Path, recipes_dir: str, case: str | None = None) -> list[Recipe]:
    """Parse the recipes; with `case`, only those whose text mentions it (a cheap pre-filter)."""
    if not (root := repo / recipes_dir).is_dir():
        raise InputRefused(
            f"no recipes directory {recipes_dir} in {repo}",
            hint="set recipes-dir in [tool.uvdock] or uvdock.toml",
        )
    # os.walk rather than Path.rglob: several times faster, and start-up time is a budget
    walk = ((folder, name) for folder, _, names in os.walk(root) for name in names)
    found = sorted(os.path.join(f, n) for f, n in walk if n.endswith((".yaml", ".yml")))
    texts = ((path, read_text(path)) for path in map(Path, found))  # refuses text not UTF-8
    return [parse(p, p.relative_to(repo).as_posix(), t) for p, t in texts if not case or case in t]


def all_cases(recipes: Iterable[Recipe]) -> list[str]:
    return sorted({c for r in recipes for e in r.entries for c in e.cases})


def require_case(repo: Path, recipes_dir: str, case: str) -> list[Recipe]:
    """The recipes that run `case`; an unknown name is refused with the closest ones."""
    if recipes := [r for r in load(repo, recipes_dir, case) if r.entries_of(case)]:
        return recipes
    import difflib

    names = all_cases(load(repo, recipes_dir))
    close = difflib.get_close_matches(case, names, n=5, cutoff=0.6)
    hint = f"closest: {', '.join(close)}" if close else f"no similar name among {len(names)} cases"
    raise InputRefused(f"unknown test case `{case}` in {recipes_dir}", hint=hint)
