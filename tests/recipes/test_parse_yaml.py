"""recipes/parse.py's line scanner against PyYAML's node positions.

`yaml.compose` says where each entry of `products:`, each row of an entry's `products:`
and each of their keys sits; the scanner must find the same entries and rows, on the same
lines, spanning the same lines (up to their last content line), with the same cases,
environments, scopes and (inherited) platforms. Run on every recipe in the test data and
on generated variants: quoting, flow and block lists, comments, CRLF, a block scalar that
looks like recipe keys, sequences at their key's column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import MEGATRON_LM
from hypothesis import given, settings
from hypothesis import strategies as st

from uvdock.recipes import parse as recipes

ROOT = Path(__file__).resolve().parents[2]


def _last_line(node: yaml.Node) -> int:
    """0-based line of the node's last character (block collections end where the next begins)."""
    if isinstance(node, yaml.MappingNode) and node.value and not node.flow_style:
        key, value = node.value[-1]
        return max(_last_line(key), _last_line(value))
    if isinstance(node, yaml.SequenceNode) and node.value and not node.flow_style:
        return _last_line(node.value[-1])
    end = node.end_mark
    return end.line - 1 if end.column == 0 and end.index > node.start_mark.index else end.line


def _values(node: yaml.Node | None) -> tuple[str, ...]:
    if node is None:
        return ()
    if isinstance(node, yaml.SequenceNode):
        return tuple(item.value for item in node.value)
    return (node.value,) if node.value else ()


def _mapping(node: yaml.Node | None) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    assert isinstance(node, yaml.MappingNode)
    found: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key, value in node.value:
        found.setdefault(key.value, (key, value))
    return found


def _block(node: yaml.MappingNode) -> tuple[int, int, int]:
    """(start line, end line exclusive, key column) of a mapping item of a block sequence."""
    first_key = node.value[0][0]
    return node.start_mark.line, _last_line(node) + 1, first_key.start_mark.column


def yaml_recipe(text: str) -> dict[str, Any]:
    top = _mapping(yaml.compose(text))
    spec = _mapping(top["spec"][1]) if "spec" in top else {}
    spec_platforms = _values(spec["platforms"][1]) if "platforms" in spec else ()
    entries = []
    for item in top["products"][1].value if "products" in top else []:
        keys = _mapping(item)
        if "test_case" not in keys:
            continue
        rows = []
        for row in keys["products"][1].value if "products" in keys else []:
            row_keys = _mapping(row)

            def values(name: str, keys: dict[str, Any] = row_keys) -> tuple[str, ...]:
                return _values(keys[name][1]) if name in keys else ()

            rows.append(
                (
                    *_block(row),
                    {name: key.start_mark.line for name, (key, _) in row_keys.items()},
                    values("environment"),
                    values("scope"),
                    values("platforms") or spec_platforms,
                )
            )
        entries.append(
            (
                *_block(item),
                keys["test_case"][0].start_mark.line,
                _values(keys["test_case"][1]),
                rows,
            )
        )
    return {"spec_platforms": spec_platforms, "entries": entries}


def scanned_recipe(text: str) -> dict[str, Any]:
    recipe = recipes.parse(Path("x.yaml"), "x.yaml", text)
    return {
        "spec_platforms": recipe.spec_platforms,
        "entries": [
            (
                e.start,
                e.end,
                e.key_column,
                e.case_line,
                e.cases,
                [
                    (r.start, r.end, r.key_column, r.keys, r.environments, r.scopes, r.platforms)
                    for r in e.rows
                ],
            )
            for e in recipe.entries
        ],
    }


def _recipe_files() -> list[Path]:
    return sorted((MEGATRON_LM / "tests/test_utils/recipes").rglob("*.yaml"))


@pytest.mark.parametrize(
    "path", _recipe_files(), ids=lambda p: p.relative_to(p.parents[5]).as_posix()
)
@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_real_recipes_agree_with_yaml(path: Path, eol: str) -> None:
    text = path.read_bytes().decode("utf-8").replace("\n", eol)
    expected = yaml_recipe(text)
    assert expected["entries"]  # not vacuous
    assert scanned_recipe(text) == expected


# --- generated variants -----------------------------------------------------------------

_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,10}(-broken)?", fullmatch=True)


@st.composite
def list_value(draw: st.DrawFn, key_column: int) -> str:
    """What follows `key:`: a flow list, one scalar, or a block list (maybe at the key's column)."""
    items = draw(st.lists(_NAME, min_size=1, max_size=3))
    quoted = [draw(st.sampled_from([i, f"'{i}'", f'"{i}"'])) for i in items]
    comment = draw(st.sampled_from(["", "  # why", " # #513"]))
    style = draw(st.sampled_from(["flow", "flow", "scalar", "block"]))
    if style == "scalar":
        return f" {quoted[0]}{comment}"
    if style == "block":
        pad = " " * draw(st.sampled_from([key_column, key_column + 2]))
        return comment + "".join(f"\n{pad}- {q}" for q in quoted)
    spaced = draw(st.sampled_from([", ", ",", " , "]))
    return f" [{spaced.join(quoted)}]{comment}"


@st.composite
def mapping_item(draw: st.DrawFn, dash_column: int, keys: list[str], nested: str = "") -> list[str]:
    column = dash_column + 2
    lines = []
    order = draw(st.permutations(keys))
    for position, key in enumerate(order):
        head = f"{' ' * dash_column}- " if position == 0 else " " * column
        lines.append(f"{head}{key}:{draw(list_value(column))}")
        if draw(st.integers(0, 4)) == 0:
            lines.append(f"{' ' * column}# a comment between keys")
    if nested:
        lines.append(f"{' ' * column}products:")
        lines.append(nested)
    return lines


@st.composite
def recipe_text(draw: st.DrawFn) -> str:
    lines = ["# banner", "type: basic", "spec:", '  name: "{test_case}_{environment}"']
    if draw(st.booleans()):
        lines.append(f"  platforms:{draw(list_value(2))}")
    lines += ["  script: |-", "    products:", "    - test_case: [not_a_case]", "products:"]
    entry_dash = draw(st.sampled_from([0, 2]))
    for _ in range(draw(st.integers(1, 3))):
        row_dash = entry_dash + 2 + draw(st.sampled_from([0, 2]))
        rows: list[str] = []
        for _ in range(draw(st.integers(1, 3))):
            keys = ["environment", "scope"] + (["platforms"] if draw(st.booleans()) else [])
            rows += draw(mapping_item(row_dash, keys))
            if draw(st.booleans()):
                rows.append(f"{' ' * row_dash}# - environment: [dev]")
        lines += draw(mapping_item(entry_dash, ["test_case"], "\n".join(rows)))
    lines.append("# trailing comment")
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return eol.join("\n".join(lines).split("\n")) + draw(st.sampled_from([eol, ""]))


@settings(max_examples=80, deadline=None)  # sized to the suite budget (conftest.py)
@given(text=recipe_text())
def test_generated_recipes_agree_with_yaml(text: str) -> None:
    assert scanned_recipe(text) == yaml_recipe(text)
