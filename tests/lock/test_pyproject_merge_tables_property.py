"""Property: the merged text means what both sides meant, whatever order the tables are in.

Each side adds keys to a table (`[tool.uv]`, `[tool.setuptools]`) and sub-tables of it,
written above the parent's header (valid TOML, and common in this family's files) or
below its keys. The sides touch different keys, so every merge succeeds, and the text
read back with tomllib (what uv reads) is base plus both sides' additions.
"""

from __future__ import annotations

import tomllib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from uvdock.merge.pyproject import merge_pyproject

PARENTS = ("tool.uv", "tool.setuptools")
# (kind, name, above the parent's header); names are per side, so the sides never collide.
Op = tuple[str, str, bool]


def side_ops(side: str) -> st.SearchStrategy[list[Op]]:
    op = st.tuples(
        st.sampled_from(["key", "sub"]),
        st.sampled_from([f"{side}{i}" for i in range(3)]),
        st.booleans(),
    )
    return st.lists(op, max_size=4, unique_by=lambda o: o[1])


def render(parent: str, keys: list[str], subs: list[tuple[str, bool]]) -> str:
    text = '[project]\nname = "demo"\nversion = "0.1.0"\n\n'
    text += "".join(f'[{parent}.{n}]\nvalue = "{n}"\n\n' for n, above in subs if above)
    text += f"[{parent}]\n" + "".join(f'{k} = "{k}"\n' for k in keys)
    text += "".join(f'\n[{parent}.{n}]\nvalue = "{n}"\n' for n, above in subs if not above)
    return text


def apply(keys: list[str], ops: list[Op]) -> tuple[list[str], list[tuple[str, bool]]]:
    return keys + [n for kind, n, _ in ops if kind == "key"], [
        (n, above) for kind, n, above in ops if kind == "sub"
    ]


def meant(parent: str, keys: list[str], subs: list[tuple[str, bool]]) -> dict[str, Any]:
    table: dict[str, Any] = {k: k for k in keys} | {n: {"value": n} for n, _ in subs}
    head, name = parent.split(".")
    return {"project": {"name": "demo", "version": "0.1.0"}, head: {name: table}}


@settings(max_examples=200, deadline=None)
@given(
    parent=st.sampled_from(PARENTS),
    base_keys=st.lists(st.sampled_from(["link-mode", "package", "zip-safe"]), unique=True),
    ours=side_ops("ours"),
    theirs=side_ops("theirs"),
)
def test_merged_text_reads_as_both_sides_additions(
    parent: str, base_keys: list[str], ours: list[Op], theirs: list[Op]
) -> None:
    o_keys, o_subs = apply(base_keys, ours)
    t_keys, t_subs = apply(base_keys, theirs)
    result = merge_pyproject(
        render(parent, base_keys, []),
        render(parent, o_keys, o_subs),
        render(parent, t_keys, t_subs),
    )
    assert result.text is not None, result.conflicts
    expected = meant(parent, o_keys + t_keys[len(base_keys) :], o_subs + t_subs)
    assert tomllib.loads(result.text) == expected


SPECS = (">=4.25.8", "<6", "!=5.0.0", "<5.30")


@settings(max_examples=150, deadline=None)
@given(
    count=st.integers(min_value=2, max_value=len(SPECS)),
    removed=st.sets(st.integers(min_value=0, max_value=len(SPECS) - 1), min_size=1),
    remover=st.sampled_from(["ours", "theirs"]),
)
def test_entries_of_one_name_keep_their_own_comments(
    count: int, removed: set[int], remover: str
) -> None:
    """One side removes some of several `protobuf` entries, the other changes another
    entry: each entry left keeps the comment written beside it."""

    def render(kept: list[int], urllib3: str) -> str:
        lines = "".join(f'    "protobuf{SPECS[i]}",  # note {i}\n' for i in kept)
        body = f'{lines}    "{urllib3}",\n'
        return f'[project]\nname = "demo"\n\n[tool.uv]\noverride-dependencies = [\n{body}]\n'

    everything = list(range(count))
    kept = [i for i in everything if i not in removed]
    base = render(everything, "urllib3>=2.5")
    removing, changing = render(kept, "urllib3>=2.5"), render(everything, "urllib3>=2.6")
    ours, theirs = (removing, changing) if remover == "ours" else (changing, removing)
    result = merge_pyproject(base, ours, theirs)
    assert result.text is not None
    assert result.text == render(kept, "urllib3>=2.6")
