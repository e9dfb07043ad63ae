"""Three-way merge of keyed entries: dependency lists and tables keyed by package.

An entry is identified by a key: for a requirement string its PEP 503 normalized name
plus its marker (so `torch; sys_platform == 'never'` and `torch>=2` are two entries), for
a `{include-group = "x"}` entry the normalized group name. Comparing by key instead of by
line is what lets two `uv add`s to the same list merge: each side's additions, removals
and changes are taken; only an entry changed differently on both sides is a conflict.

Pure data: values are plain Python (what `tomlkit` items unwrap to). The caller applies
the returned plan to its document.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from uvdock.project.names import normalize_name


def entry_key(value: Any) -> str:
    """The identity of one dependency-list entry."""
    if isinstance(value, dict) and set(value) == {"include-group"}:
        return f"include-group:{normalize_name(str(value['include-group']))}"
    if isinstance(value, str):
        try:
            req = Requirement(value)
        except InvalidRequirement:
            return f"text:{value.strip()}"
        marker = f"; {req.marker}" if req.marker is not None else ""
        return f"{normalize_name(req.name)}{marker}"
    return f"value:{value!r}"


def entry_value(value: Any) -> Hashable:
    """What two entries with the same key are compared by: `beta>=2` equals `Beta >= 2`."""
    if isinstance(value, str):
        try:
            return str(Requirement(value))
        except InvalidRequirement:
            return value.strip()
    return repr(value)


@dataclass(frozen=True)
class Taken:
    """One change the merged result holds, and the side it came from."""

    path: str
    entry: str
    change: str  # "added" | "removed" | "changed"
    side: str  # "ours" | "theirs"
    written: str = ""  # the entry as the side wrote it (as base had it, for a removal)


@dataclass(frozen=True)
class Conflict:
    """The same entry (or value) changed differently on both sides."""

    path: str
    ours: str
    theirs: str

    def line(self) -> str:
        """One line for a warning: the values when short, else only the key."""
        if len(self.ours) + len(self.theirs) > LINE_VALUES:
            return f"{self.path}: changed differently on both sides"
        return f"{self.path}: ours {self.ours}, theirs {self.theirs}"


LINE_VALUES = 120  # characters of both values a conflict line shows; beyond, the key alone


@dataclass(frozen=True)
class ListPlan:
    """How to turn ours' list into the merged one, by positions in ours and theirs.

    `remove`: indexes in ours; `replace`: (index in ours, index in theirs);
    `insert`: (index in theirs, its key, the key it goes after or None for the start),
    applied in order after the removals.
    """

    remove: tuple[int, ...]  # highest first, so deleting in order keeps the others valid
    replace: tuple[tuple[int, int], ...]
    insert: tuple[tuple[int, str, str | None], ...]
    kept: tuple[str, ...]  # ours' keys still present after the removals, in ours' order
    ours_added: frozenset[str]
    taken: tuple[Taken, ...]
    conflicts: tuple[Conflict, ...]


def keyed(
    values: Sequence[Any], key_of: Callable[[Any], str], base: Sequence[Any] = ()
) -> dict[str, int]:
    """Key -> index, in the order of `values`; a repeated key gets `#2`, `#3`... so no
    entry is silently lost. Entries sharing a key take the suffix of base's entry of the
    same value first (so removing one of two `protobuf` entries removes that one, and each
    keeps its comment), then the free ones in order."""
    groups: dict[str, list[int]] = {}
    for index, value in enumerate(values):
        groups.setdefault(key_of(value), []).append(index)
    in_base: dict[str, list[Hashable]] = {}
    for value in base:
        in_base.setdefault(key_of(value), []).append(entry_value(value))
    found: dict[int, str] = {}
    for key, indexes in groups.items():
        olds = in_base.get(key, [])
        slots = [key, *(f"{key}#{n}" for n in range(2, max(len(indexes), len(olds)) + 1))]
        for index in indexes:
            value = entry_value(values[index])
            match = next((j for j, old in enumerate(olds) if old == value and slots[j]), None)
            if match is not None:
                found[index], slots[match] = slots[match], ""
        free = iter(slot for slot in slots if slot)
        for index in indexes:
            if index not in found:
                found[index] = next(free)
    return {found[index]: index for index in sorted(found)}


def show(value: Any) -> str:
    if value is None:
        return "(absent)"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def _label(key: str) -> str:
    return key.split(":", 1)[1] if key.startswith(("text:", "include-group:")) else key


def decide(base: Any, ours: Any, theirs: Any, same: Callable[[Any, Any], bool]) -> str:
    """'ours', 'theirs' or 'conflict' for one three-way value (None = absent)."""
    if same(ours, theirs) or same(base, theirs):
        return "ours"
    if same(base, ours):
        return "theirs"
    return "conflict"


def entry_conflicts(path: str, ours: Any, theirs: Any) -> list[Conflict]:
    """One entry changed differently on both sides; for two tables, each key they differ in."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        keys = [k for k in dict.fromkeys([*ours, *theirs]) if ours.get(k) != theirs.get(k)]
        return [Conflict(f"{path}.{k}", show(ours.get(k)), show(theirs.get(k))) for k in keys]
    return [Conflict(path, show(ours), show(theirs))]


def _change(base: Any, new: Any) -> str:
    if base is None:
        return "added"
    return "removed" if new is None else "changed"


def _written(base: Any, new: Any) -> str:
    value = base if new is None else new
    return value if isinstance(value, str) else repr(value)


def _same_entry(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return bool(entry_value(a) == entry_value(b))


def merge_list(
    path: str,
    base: Sequence[Any],
    ours: Sequence[Any],
    theirs: Sequence[Any],
    key_of: Callable[[Any], str] = entry_key,
) -> ListPlan:
    """Plan the three-way merge of one list whose entries are identified by `key_of`."""
    b_keys = keyed(base, key_of)
    o_keys, t_keys = keyed(ours, key_of, base), keyed(theirs, key_of, base)
    remove: list[int] = []
    replace: list[tuple[int, int]] = []
    taken: list[Taken] = []
    conflicts: list[Conflict] = []
    added: set[str] = set()
    for key in dict.fromkeys([*o_keys, *t_keys, *b_keys]):
        b, o, t = _get(base, b_keys, key), _get(ours, o_keys, key), _get(theirs, t_keys, key)
        verdict = decide(b, o, t, _same_entry)
        if verdict == "conflict":
            conflicts += entry_conflicts(f"{path}[{_label(key)}]", o, t)
        elif verdict == "theirs":
            taken.append(Taken(path, _label(key), _change(b, t), "theirs", _written(b, t)))
            if t is None:
                remove.append(o_keys[key])
            elif o is not None:
                replace.append((o_keys[key], t_keys[key]))
            else:
                added.add(key)
        elif not _same_entry(b, o):
            taken.append(Taken(path, _label(key), _change(b, o), "ours", _written(b, o)))
    kept = [k for k, i in o_keys.items() if i not in remove]
    return ListPlan(
        tuple(sorted(remove, reverse=True)),
        tuple(replace),
        tuple(_insertions(list(t_keys), added, set(kept), t_keys)),
        tuple(kept),
        frozenset(k for k in o_keys if k not in b_keys),
        tuple(taken),
        tuple(conflicts),
    )


def _get(values: Sequence[Any], keys: dict[str, int], key: str) -> Any:
    index = keys.get(key)
    return None if index is None else values[index]


def _insertions(
    theirs_order: list[str], added: set[str], kept: set[str], t_keys: dict[str, int]
) -> list[tuple[int, str, str | None]]:
    """Each added entry goes after the entry that precedes it on theirs' side."""
    result: list[tuple[int, str, str | None]] = []
    previous: str | None = None
    present = set(kept)
    for key in theirs_order:
        if key in added:
            result.append((t_keys[key], key, previous))
            present.add(key)
            previous = key
        elif key in present:
            previous = key
    return result
