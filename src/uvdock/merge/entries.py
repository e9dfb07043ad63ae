"""Three-way merge of keyed entries: dependency lists, uv's set-like lists, package tables.

A requirement is known by its PEP 503 name and marker (`torch; sys_platform == 'never'`
and `torch>=2` are two entries), uv's `[tool.uv]` sets by name, marker or set of items:
by key, not by line, two `uv add`s to one list merge. Plain values in, a plan out.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement

from uvdock.project.names import normalize_name

DEPENDENCY_LISTS: tuple[tuple[str, ...], ...] = (
    ("build-system", "requires"), ("project", "dependencies"),
    ("project", "optional-dependencies", "*"), ("dependency-groups", "*"),
    *(("tool", "uv", name) for name in ("dev-dependencies", "override-dependencies",
                                        "constraint-dependencies", "build-constraint-dependencies")),
)  # fmt: skip


@lru_cache(maxsize=4096)
def _requirement(entry: str) -> Requirement | None:
    """Parsed once: the three sides share most of their entries."""
    try:
        return Requirement(entry)
    except InvalidRequirement:
        return None


def entry_key(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"include-group"}:
        return f"include-group:{normalize_name(str(value['include-group']))}"
    if not isinstance(value, str):
        return f"value:{value!r}"
    if (req := _requirement(value)) is None:
        return f"text:{value.strip()}"
    return normalize_name(req.name) + (f"; {req.marker}" if req.marker is not None else "")


def entry_value(value: Any) -> Hashable:
    """What two entries with the same key are compared by: `beta>=2` equals `Beta >= 2`."""
    if isinstance(value, str):
        req = _requirement(value)
        return value.strip() if req is None else str(req)
    return repr(value)


def _name_key(value: Any) -> str:
    return normalize_name(value.strip()) if isinstance(value, str) else f"value:{value!r}"


def _marker_key(value: Any) -> str:
    if not isinstance(value, str):
        return f"value:{value!r}"
    try:
        return str(Marker(value))
    except InvalidMarker:
        return value.strip()


def _conflict_item(item: Any) -> str:
    if not isinstance(item, dict):
        return repr(item)
    shown = {k: normalize_name(v) if isinstance(v, str) else repr(v) for k, v in item.items()}
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(shown.items())) + "}"


def _conflict_set_key(value: Any) -> str:
    """`[{extra = "a"}, {extra = "b"}]` and `[{extra = "b"}, {extra = "a"}]` are one set."""
    if not isinstance(value, list):
        return f"value:{value!r}"
    return "[" + ", ".join(sorted(_conflict_item(item) for item in value)) + "]"


# The lists of `[tool.uv]` that uv reads as sets, and how their entries are told apart.
_UV_SETS: dict[str, Callable[[Any], str]] = {
    **dict.fromkeys(("no-build-isolation-package", "no-build-package", "no-binary-package",
                     "reinstall-package", "upgrade-package"), _name_key),
    "environments": _marker_key, "required-environments": _marker_key,
    "conflicts": _conflict_set_key,
}  # fmt: skip


def key_of(path: tuple[str, ...]) -> Callable[[Any], str] | None:
    """How the entries of the list at `path` are told apart; None: it is not merged by entry."""
    if any(
        len(p) == len(path) and all(a in ("*", b) for a, b in zip(p, path, strict=True))
        for p in DEPENDENCY_LISTS
    ):
        return entry_key
    return _UV_SETS.get(path[2]) if len(path) == 3 and path[:2] == ("tool", "uv") else None


class Taken(NamedTuple):
    path: str
    entry: str
    change: str  # "added" | "removed" | "changed"
    side: str  # "ours" | "theirs"
    written: str = ""  # the entry as the side wrote it (as base had it, for a removal)


class Conflict(NamedTuple):
    path: str
    ours: str
    theirs: str

    def line(self) -> str:
        """One line for a warning: the values when short (120 characters), else the key."""
        if len(self.ours) + len(self.theirs) > 120:
            return f"{self.path}: changed differently on both sides"
        return f"{self.path}: ours {self.ours}, theirs {self.theirs}"


@dataclass
class ListPlan:
    """How to turn ours' list into the merged one, by positions in ours and theirs."""

    remove: list[int] = field(default_factory=list)  # highest first, deleted in this order
    replace: list[tuple[int, int]] = field(default_factory=list)  # (index in ours, in theirs)
    # (index in theirs, its key, the key it goes after or None: the start), after removals
    insert: list[tuple[int, str, str | None]] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # ours' keys left after removals, in order
    ours_added: set[str] = field(default_factory=set)
    taken: list[Taken] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)


def keyed(
    values: Sequence[Any], key_of: Callable[[Any], str], base: Sequence[Any] = ()
) -> dict[str, int]:
    """Key -> index; a repeated key gets `#2`, `#3`... so no entry is lost, base's suffix
    for the same value first (removing one of two `protobuf` entries removes that one)."""
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
        found.update({index: next(free) for index in indexes if index not in found})
    return {found[index]: index for index in sorted(found)}


def show(value: Any) -> str:
    return "(absent)" if value is None else f'"{value}"' if isinstance(value, str) else repr(value)


def change(base: Any, new: Any) -> str:
    return "added" if base is None else "removed" if new is None else "changed"


def decide(base: Any, ours: Any, theirs: Any, same: Callable[[Any, Any], bool]) -> str:
    """'ours', 'theirs' or 'conflict' for one three-way value (None = absent)."""
    if same(ours, theirs) or same(base, theirs):
        return "ours"
    return "theirs" if same(base, ours) else "conflict"


def _same_entry(a: Any, b: Any) -> bool:
    return a is b if a is None or b is None else bool(entry_value(a) == entry_value(b))


def merge_list(
    path: str,
    base: Sequence[Any],
    ours: Sequence[Any],
    theirs: Sequence[Any],
    key_of: Callable[[Any], str] | None = None,
) -> ListPlan:
    """`key_of`: how entries are told apart (a dependency list's entry_key unless given)."""
    key_of = key_of or entry_key
    b_keys = keyed(base, key_of)
    o_keys, t_keys = keyed(ours, key_of, base), keyed(theirs, key_of, base)
    plan, added = ListPlan(), set[str]()
    sides = ((base, b_keys), (ours, o_keys), (theirs, t_keys))
    for key in dict.fromkeys([*o_keys, *t_keys, *b_keys]):
        b, o, t = (values[keys[key]] if key in keys else None for values, keys in sides)
        verdict = decide(b, o, t, _same_entry)
        label = key.split(":", 1)[1] if key.startswith(("text:", "include-group:")) else key
        side, new = ("theirs", t) if verdict == "theirs" else ("ours", o)
        if verdict == "conflict" and isinstance(o, dict) and isinstance(t, dict):
            # Two tables: each key they differ in.
            differ = [k for k in dict.fromkeys([*o, *t]) if o.get(k) != t.get(k)]
            plan.conflicts += [
                Conflict(f"{path}[{label}].{k}", show(o.get(k)), show(t.get(k))) for k in differ
            ]
        elif verdict == "conflict":
            plan.conflicts.append(Conflict(f"{path}[{label}]", show(o), show(t)))
        elif not _same_entry(b, new):
            value = b if new is None else new
            written = value if isinstance(value, str) else repr(value)
            plan.taken.append(Taken(path, label, change(b, new), side, written))
        if verdict == "theirs" and t is None:
            plan.remove.insert(0, o_keys[key])  # keys come in ours' order: highest first
        elif verdict == "theirs" and o is not None:
            plan.replace.append((o_keys[key], t_keys[key]))
        elif verdict == "theirs":
            added.add(key)
    plan.kept = [k for k, i in o_keys.items() if i not in plan.remove]
    plan.ours_added = o_keys.keys() - b_keys.keys()
    # Each added entry goes after the entry that precedes it on theirs' side.
    present, previous = set(plan.kept), None
    for key in t_keys:
        if key in added:
            plan.insert.append((t_keys[key], key, previous))
            present.add(key)
        previous = key if key in present else previous
    return plan


class PinClash(NamedTuple):
    """A package a merge left pinned (`==`) differently in two lists (one side's change of
    each): uv fails to resolve it, or silently overrules one (through an override)."""

    package: str  # the name, with its marker when it has one
    pins: tuple[tuple[str, str], ...]  # (dotted list, the requirement as written)

    def line(self) -> str:
        where = ", ".join(f"{path} ({req})" for path, req in self.pins)
        return f"{self.package} pinned differently: {where}"


def _lists(data: Any, pattern: tuple[str, ...], path: tuple[str, ...] = ()) -> Iterator[Any]:
    if not pattern:
        if isinstance(data, list):
            yield ".".join(path), data
    elif isinstance(data, dict):
        for key in list(data) if pattern[0] == "*" else [pattern[0]]:
            if key in data:
                yield from _lists(data[key], pattern[1:], (*path, key))


def _clashing(data: Any) -> dict[str, dict[str, str]]:
    """package (+ marker) -> {list: requirement} for the packages pinned (`==`) differently."""
    found: dict[str, dict[str, tuple[str, str]]] = {}  # specifiers as packaging writes them
    for pattern in DEPENDENCY_LISTS:
        for path, entries in _lists(data, pattern):
            for entry in entries:
                req = _requirement(entry) if isinstance(entry, str) else None
                if req is not None and any(s.operator in ("==", "===") for s in req.specifier):
                    found.setdefault(entry_key(entry), {})[path] = (entry, str(req.specifier))
    return {
        key: {path: entry for path, (entry, _) in by.items()}
        for key, by in found.items()
        if len({spec for _, spec in by.values()}) > 1
    }


def new_clashes(merged: Any, ours: Any, theirs: Any) -> tuple[PinClash, ...]:
    """The pins that differ in `merged` and differed on neither side alone."""
    before = set(_clashing(ours)) | set(_clashing(theirs))
    return tuple(
        PinClash(key, tuple(by.items()))
        for key, by in _clashing(merged).items()
        if key not in before
    )
