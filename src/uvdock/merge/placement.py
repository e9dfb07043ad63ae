"""Putting theirs' items into ours' tomlkit document, each where it belongs.

The structured merge decides what the merged document holds; these functions place it:
a key after the key that precedes it on theirs' side, a `[section]` never above ours'
plain keys (a header there would take those keys), a list entry after its neighbour with
its trailing comment, a table of an array of tables apart from the one before it.
"""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.items import AoT, Array, Item, Table

from uvdock.merge.entries import ListPlan

MISSING = object()  # a key absent on one side (None is not a TOML value, but keep it apart)


def take(ours: Any, theirs: Any, key: str, t_item: Any) -> None:
    """Put theirs' item for `key` into ours: replace in place, delete, or insert after the
    key that precedes it in theirs."""
    if t_item is MISSING:
        del ours[key]
    elif key in ours:
        ours[key] = t_item
    else:
        insert_key(ours, theirs, key, t_item)


def _is_section(item: Any) -> bool:
    """A `[table]` or `[[array of tables]]` of its own: it ends the keys written above it."""
    return isinstance(item, AoT) or (isinstance(item, Table) and not item.is_inline_table())


def insert_key(ours: Any, theirs: Any, key: str, item: Item) -> None:
    """After the key that precedes it in theirs, among keys of its own kind: a key goes
    among the keys, a section never above them (theirs may write `[tool.uv.workspace]`
    above `[tool.uv]`; put first in ours it would take ours' `[tool.uv]` keys)."""
    container = ours.value if isinstance(ours, Table) else ours
    section = _is_section(item)
    previous = None
    for other in theirs:
        if other == key:
            break
        if other in ours and _is_section(ours.get(other)) == section:
            previous = other
    if not isinstance(container, Container):
        ours[key] = item
    elif previous is not None:
        container._insert_after(previous, key, item)
    else:
        body = [index for index, (_, it) in enumerate(container.body) if _is_section(it)]
        if section and not body:
            ours[key] = item  # appended after ours' keys
        elif section or len(container) > 0:
            container._insert_at(body[0] if section else 0, key, item)
        else:
            ours[key] = item


def apply_list_plan(plan: ListPlan, ours: Any, theirs: Any) -> None:
    for o_index, t_index in plan.replace:
        ours[o_index] = theirs[t_index]
    for o_index in plan.remove:
        del ours[o_index]
    keys = list(plan.kept)
    for t_index, key, after in plan.insert:
        # After its neighbour, and after what ours added there too (as git would).
        position = 0 if after is None else keys.index(after) + 1
        while position < len(keys) and keys[position] in plan.ours_added:
            position += 1
        ours.insert(position, theirs[t_index])
        keys.insert(position, key)
        _carry_comment(ours, position, theirs, t_index)
        _keep_tables_apart(ours, position, theirs, t_index)


def _keep_tables_apart(ours: Any, o_index: int, theirs: Any, t_index: int) -> None:
    """A table added to an array of tables (`[[tool.uv.index]]`) after a blank line keeps
    it: tomlkit counts that line as the end of the table before, which in ours may lack it."""
    if not isinstance(ours, AoT) or o_index == 0 or t_index == 0:
        return
    if theirs[t_index - 1].as_string().endswith("\n\n"):
        before = ours[o_index - 1]
        if not before.as_string().endswith("\n\n"):
            before.add(tomlkit.nl())


def _group_of(array: Any, index: int) -> Any:
    """tomlkit's private per-entry record (indent, value, comma, comment) of one entry."""
    entry = array[index]
    return next((g for g in getattr(array, "_value", ()) if g.value is entry), None)


def _carry_comment(ours: Any, o_index: int, theirs: Any, t_index: int) -> None:
    """An entry added with a trailing comment (or comma) keeps it in a multi-line list.

    The comma matters after a comment-only line: tomlkit copies the comma from the line
    before, and a comment line has none."""
    if not isinstance(ours, Array) or "\n" not in ours.as_string():
        return
    source, target = _group_of(theirs, t_index), _group_of(ours, o_index)
    if source is None or target is None:
        return
    if source.comment is not None:
        target.comment = source.comment
    if source.comma is not None and target.comma is None:
        target.comma = source.comma
