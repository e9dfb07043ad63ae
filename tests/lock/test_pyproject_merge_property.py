"""Property: random add/remove/change on both sides of a base dependency list.

Whenever no entry is touched on both sides, the merged list is base minus the removals
plus the additions (with the changes); when an entry is touched differently on both
sides, the merge is refused.
"""

from __future__ import annotations

import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st

from uvdock.merge.pyproject import merge_pyproject

BASE_NAMES = [f"pkg{i}" for i in range(8)]
NEW_NAMES = [f"new{i}" for i in range(4)]  # either side may add these

# One side's operations: name -> "remove" | "change" | "add".
Ops = dict[str, str]


def ops() -> st.SearchStrategy[Ops]:
    existing = st.dictionaries(
        st.sampled_from(BASE_NAMES), st.sampled_from(["remove", "change"]), max_size=4
    )
    added = st.dictionaries(st.sampled_from(NEW_NAMES), st.just("add"), max_size=3)
    return st.tuples(existing, added).map(lambda pair: {**pair[0], **pair[1]})


def render(entries: list[str]) -> str:
    body = "".join(f'    "{e}",\n' for e in entries)
    return f'[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = [\n{body}]\n'


def apply_ops(base: dict[str, str], side_ops: Ops, side: str) -> dict[str, str]:
    # Each side writes its own specifier, so the same entry touched on both sides differs.
    result = dict(base)
    for name, op in side_ops.items():
        if op == "remove":
            result.pop(name, None)
        else:
            result[name] = f"{name}>={1 if side == 'ours' else 2}.{len(name)}"
    return result


def entries(specs: dict[str, str]) -> list[str]:
    return list(specs.values())


@settings(max_examples=150, deadline=None)  # sized to the suite budget (conftest.py)
@given(
    base_names=st.lists(st.sampled_from(BASE_NAMES), unique=True, min_size=1),
    ours_ops=ops(),
    theirs_ops=ops(),
)
def test_merge_equals_set_arithmetic_or_refuses(
    base_names: list[str], ours_ops: Ops, theirs_ops: Ops
) -> None:
    ours_ops = {n: op for n, op in ours_ops.items() if op == "add" or n in base_names}
    theirs_ops = {n: op for n, op in theirs_ops.items() if op == "add" or n in base_names}
    base = {n: n for n in base_names}
    ours = apply_ops(base, ours_ops, "ours")
    theirs = apply_ops(base, theirs_ops, "theirs")
    result = merge_pyproject(render(entries(base)), render(entries(ours)), render(entries(theirs)))
    both = set(ours_ops) & set(theirs_ops)
    identical = {n for n in both if ours_ops[n] == theirs_ops[n] == "remove"}
    if both - identical:
        assert result.text is None
        assert {c.path for c in result.conflicts} == {
            f"project.dependencies[{n}]" for n in both - identical
        }
        return
    assert result.conflicts == ()
    assert result.text is not None
    expected = dict(base)
    for side_ops, side in ((ours_ops, ours), (theirs_ops, theirs)):
        for name in side_ops:
            if name in side:
                expected[name] = side[name]
            else:
                expected.pop(name, None)
    merged = tomllib.loads(result.text)["project"]["dependencies"]
    assert sorted(merged) == sorted(expected.values())
    assert len(merged) == len(set(merged))
