"""image/gitlab.py's line scanner against PyYAML's node positions.

For every mapping item of a block sequence, `yaml.compose` says where each scalar value
starts and ends; the scanner must find the same items on the same lines, with the same
values at the same offsets. Values the scanner documents it does not read (flow
collections, block scalars, nested blocks, anchors, aliases, tags) are left out of the
expectation. Run on every YAML file of the test data and on generated variants.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import MEGATRON_LM, MEGATRON_LM_HISTORY
from hypothesis import given, settings
from hypothesis import strategies as st

from uvdock.image.gitlab import sequence_items

ROOT = Path(__file__).resolve().parents[2]

Fields = dict[str, tuple[str, int, int]]


def _readable_value(text: str, node: yaml.Node) -> tuple[str, int, int] | None:
    """(value, start, end) as the scanner should report it, or None for a value it skips."""
    if not isinstance(node, yaml.ScalarNode) or node.style not in (None, "'", '"'):
        return None
    start, end = node.start_mark.index, node.end_mark.index
    if start == end or text[start] in "!&*":  # empty, or a tag / anchor / alias
        return None
    if node.start_mark.line != node.end_mark.line:
        return None  # a multi-line scalar: not the scanner's shape (the test data has none)
    if node.style is None:
        return node.value, start, end
    inside = text[start + 1 : end - 1]  # "double" values are compared as written
    return inside.replace("''", "'") if node.style == "'" else inside, start + 1, end - 1


def _fields(text: str, item: yaml.MappingNode) -> Fields:
    fields: Fields = {}
    for key, value in item.value:
        readable = _readable_value(text, value)
        if isinstance(key, yaml.ScalarNode) and readable is not None:
            fields.setdefault(key.value, readable)
    return fields


def yaml_items(text: str) -> dict[int, Fields]:
    """1-based line of each block-sequence mapping item -> its readable scalar fields."""
    items: dict[int, Fields] = {}

    def walk(node: yaml.Node) -> None:
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                mapping = isinstance(item, yaml.MappingNode)
                if mapping and not node.flow_style and not item.flow_style:
                    items[item.start_mark.line + 1] = _fields(text, item)
                walk(item)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(key)
                walk(value)

    root = yaml.compose(text)
    if root is not None:
        walk(root)
    return items


def scanner_items(text: str) -> dict[int, Fields]:
    return {
        item.line: {key: (s.value, s.start, s.end) for key, s in item.fields.items()}
        for item in sequence_items(text)
    }


def _yaml_files() -> list[Path]:
    folders = [MEGATRON_LM, *sorted(MEGATRON_LM_HISTORY.glob("*"))]
    return sorted(p for folder in folders for p in folder.rglob("*.y*ml") if p.is_file())


@pytest.mark.parametrize(
    "path", _yaml_files(), ids=lambda p: p.relative_to(p.parents[3]).as_posix()
)
def test_real_files_agree_with_yaml(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    assert scanner_items(text) == yaml_items(text)
    assert scanner_items(text.replace("\n", "\r\n")) == yaml_items(text.replace("\n", "\r\n"))


def test_the_real_build_file_has_matrix_rows() -> None:
    text = (MEGATRON_LM / ".gitlab/stages/01.build.yml").read_text()
    rows = [fields for fields in scanner_items(text).values() if "BASE_IMAGE" in fields]
    assert len(rows) == 6  # the comparison above is not vacuous


# --- generated variants -----------------------------------------------------------------

_PLAIN = st.from_regex(r"[A-Za-z][A-Za-z0-9_.\-/]{0,8}(:[0-9A-Za-z.\-]{1,8})?", fullmatch=True)
_KEYS = st.sampled_from(["IMAGE", "FILE", "BASE_IMAGE", "PLATFORM", "IMAGE_TYPE", "a.b", "x-y"])


@st.composite
def value_text(draw: st.DrawFn, indent: int) -> str:
    """What follows `KEY:` on its line (with a leading space), possibly a nested block."""
    plain = draw(_PLAIN)
    style = draw(st.sampled_from(["plain", "single", "double", "flow", "block", "empty"]))
    if style == "single":
        text = " '" + draw(st.sampled_from([plain, "it''s", "a # b", ""])) + "'"
    elif style == "double":
        text = ' "' + draw(st.sampled_from([plain, "a # b", "", "it's"])) + '"'
    elif style == "flow":
        text = f" [{plain}, '{plain}']"
    elif style == "block":
        # A block sequence may sit at the key's own column (YAML allows it), or deeper.
        pad = " " * draw(st.sampled_from([indent - 2, indent, indent + 2]))
        return f"\n{pad}- {plain}\n{pad}- '{plain}'"
    elif style == "empty":
        text = ""
    else:
        text = " " + plain
    comment = draw(st.sampled_from(["", "  # note", " #x"]))
    return text + (comment if text else "")


@st.composite
def matrix(draw: st.DrawFn) -> str:
    base = draw(st.sampled_from([2, 4, 6]))
    dash_column = draw(st.sampled_from([base - 2, base]))
    gap = draw(st.sampled_from([1, 3]))
    key_column = dash_column + 1 + gap
    lines = ["job:", "  parallel:", f"{' ' * (base - 2)}matrix:"]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        keys = draw(st.lists(_KEYS, min_size=1, max_size=4, unique=True))
        for position, key in enumerate(keys):
            spelled = draw(st.sampled_from([key, f'"{key}"', f"'{key}'"]))
            head = f"{' ' * dash_column}-{' ' * gap}" if position == 0 else " " * key_column
            lines.append(f"{head}{spelled}:{draw(value_text(key_column + 2))}")
            if draw(st.booleans()):
                lines.append(draw(st.sampled_from(["", f"{' ' * key_column}# between keys"])))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    final = draw(st.sampled_from([eol, ""]))
    return eol.join(lines) + final


@settings(max_examples=80, deadline=None)  # sized to the suite budget (conftest.py)
@given(text=matrix())
def test_generated_matrices_agree_with_yaml(text: str) -> None:
    assert scanner_items(text) == yaml_items(text)
