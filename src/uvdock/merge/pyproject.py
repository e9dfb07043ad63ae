"""Three-way merge of pyproject.toml (base, ours, theirs), keeping ours' formatting.

The merge starts from ours' document (tomlkit keeps every byte it is not asked to
change) and brings in what theirs changed since base:

- dependency lists are merged entry by entry (entry_merge: name + marker), and so are
  uv's set-like lists in `[tool.uv]` (uv_lists: names, markers, sets of conflicts);
- `tool.uv.index` entries by `name`; tables key by key (so `tool.uv.sources` merges
  package by package, and two new dependency groups merge);
- any other value is taken from the side that changed it; changed differently on both
  sides is a conflict, reported with its TOML path and both values, and nothing is merged.

Pure: three texts in, a text (or the conflicts) out. tomlkit is imported here only, so
only the commands that merge pay for it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Array, Item, Table

from uvdock.merge.comments import carry_comments
from uvdock.merge.entries import Conflict, ListPlan, Taken, decide, merge_list, show
from uvdock.merge.textual import Textual, prefer_git_bytes
from uvdock.merge.uv_lists import key_function
from uvdock.project.names import normalize_name

BOM = "\ufeff"  # a UTF-8 byte order mark, decoded

DEPENDENCY_LISTS: tuple[tuple[str, ...], ...] = (
    ("build-system", "requires"),
    ("project", "dependencies"),
    ("project", "optional-dependencies", "*"),
    ("dependency-groups", "*"),
    ("tool", "uv", "dev-dependencies"),
    ("tool", "uv", "override-dependencies"),
    ("tool", "uv", "constraint-dependencies"),
    ("tool", "uv", "build-constraint-dependencies"),
)
# Tables keyed by package: each value is one entry, reported and merged whole.
PACKAGE_TABLES: tuple[tuple[str, ...], ...] = (("tool", "uv", "sources"),)
KEYED_ARRAYS: dict[tuple[str, ...], str] = {("tool", "uv", "index"): "name"}

MISSING = object()  # a key absent on one side (None is not a TOML value, but keep it apart)


class MergeRefused(ValueError):
    """A side is not TOML as tomllib reads it (a duplicate key, say), or the merged text
    would not be: nothing is merged; the caller falls back to git's markers or refuses."""


@dataclass(frozen=True)
class MergeResult:
    text: str | None  # None when there are conflicts
    taken: tuple[Taken, ...]
    conflicts: tuple[Conflict, ...]
    # Whose bytes `text` is: "git" (git merge-file's clean result, same data), "git-hunks"
    # (git's result with each conflicted hunk resolved from both sides' own lines) or
    # "uvdock" (ours' document with theirs' changes applied by tomlkit).
    via: str = "uvdock"


def dotted(path: tuple[str, ...]) -> str:
    return ".".join(k if k.replace("-", "").replace("_", "").isalnum() else f'"{k}"' for k in path)


def is_dependency_list(path: tuple[str, ...]) -> bool:
    return any(
        len(p) == len(path) and all(a in ("*", b) for a, b in zip(p, path, strict=True))
        for p in DEPENDENCY_LISTS
    )


def _plain(item: Any) -> Any:
    if item is MISSING:
        return None
    return item.unwrap() if hasattr(item, "unwrap") else item


def _same(a: Any, b: Any) -> bool:
    return bool(a == b)


def _is_table(item: Any) -> bool:
    return isinstance(item, Table | Container) or type(item).__name__ == "OutOfOrderTableProxy"


def _uses_crlf(text: str) -> bool:
    return "\r\n" in text and text.count("\n") == text.count("\r\n")


class _Merge:
    """Walks ours' document, changing it in place where theirs changed something."""

    def __init__(self) -> None:
        self.taken: list[Taken] = []
        self.conflicts: list[Conflict] = []

    def table(self, path: tuple[str, ...], base: Any, ours: Any, theirs: Any) -> None:
        if path in PACKAGE_TABLES:
            _spell_packages_as(ours, base)
            _spell_packages_as(ours, theirs)
        keys = dict.fromkeys([*ours.keys(), *theirs.keys(), *base.keys()])
        for key in keys:
            self.value((*path, key), base.get(key, MISSING), ours, theirs)

    def value(self, path: tuple[str, ...], b_item: Any, ours: Any, theirs: Any) -> None:
        key = path[-1]
        o_item, t_item = ours.get(key, MISSING), theirs.get(key, MISSING)
        b, o, t = _plain(b_item), _plain(o_item), _plain(t_item)
        verdict = decide(b, o, t, _same)
        reflowed = _reflowed_only(path, b_item, o_item, t_item)
        if reflowed == "theirs":
            self.report(path, b, o, "ours")
            self.onto_theirs_layout(path, b, o_item, t_item, ours)
        elif reflowed == "ours":
            self.array(path, b, o_item, t_item)
        elif verdict == "ours" and not _text_changed(b_item, t_item):
            self.report(path, b, o, "ours")
        elif _is_table(o_item) and _is_table(t_item) and (b_item is MISSING or _is_table(b_item)):
            # Walk into tables even when one side alone changed them: replacing a whole
            # table would move ours' out-of-order sub-tables and their comments.
            self.table(path, b_item if b_item is not MISSING else {}, o_item, t_item)
        elif verdict == "ours":  # theirs' text differs, its data does not: ours' stays
            self.report(path, b, o, "ours")
        elif verdict == "theirs":
            self.report(path, b, t, "theirs")
            _take(ours, theirs, key, t_item)
        elif isinstance(o_item, Array | AoT) and isinstance(t_item, Array | AoT):
            self.array(path, b if isinstance(b, list) else [], o_item, t_item)
        else:
            self.conflicts.append(Conflict(dotted(path), show(o), show(t)))

    def array(self, path: tuple[str, ...], base: list[Any], ours: Any, theirs: Any) -> None:
        name = dotted(path)
        key_of = key_function(path)
        if is_dependency_list(path):
            plan = merge_list(name, base, _plain(ours), _plain(theirs))
        elif key_of is not None:
            plan = merge_list(name, base, _plain(ours), _plain(theirs), key_of)
        elif path in KEYED_ARRAYS:
            field = KEYED_ARRAYS[path]
            plan = merge_list(name, base, _plain(ours), _plain(theirs), _field_key(field))
        else:
            self.conflicts.append(Conflict(name, show(_plain(ours)), show(_plain(theirs))))
            return
        self.taken.extend(plan.taken)
        self.conflicts.extend(plan.conflicts)
        if not plan.conflicts:
            apply_list_plan(plan, ours, theirs)

    def onto_theirs_layout(
        self, path: tuple[str, ...], base: Any, o_item: Any, t_item: Any, ours: Any
    ) -> None:
        """Theirs only reformatted the list (reflowed it, say) and ours changed its
        entries: ours' changes go into theirs' layout, which then replaces ours'."""
        key_of = key_function(path)
        plan = merge_list(
            dotted(path), base, _plain(t_item), _plain(o_item), *([key_of] if key_of else [])
        )
        apply_list_plan(plan, t_item, o_item)
        ours[path[-1]] = t_item

    def report(self, path: tuple[str, ...], base: Any, new: Any, side: str) -> None:
        """Record what one side changed, entry by entry in lists, key by key in tables."""
        if _same(base, new):
            return
        if isinstance(base, dict) and isinstance(new, dict) and path[:-1] not in PACKAGE_TABLES:
            for key in dict.fromkeys([*base, *new]):
                self.report((*path, key), base.get(key), new.get(key), side)
        elif _listed_by_entry(path) and isinstance(base, list) and isinstance(new, list):
            key_of = key_function(path)
            plan = merge_list(dotted(path), base, base, new, *([key_of] if key_of else []))
            taken = plan.taken
            self.taken.extend(replace(t, side=side) for t in taken)
        else:
            change = "added" if base is None else "removed" if new is None else "changed"
            self.taken.append(Taken(dotted(path), "", change, side))


def _text_changed(b_item: Any, t_item: Any) -> bool:
    """Theirs' text of a table differs from base's (its data may not: a reflowed list)."""
    if b_item is MISSING or t_item is MISSING or not _is_table(t_item):
        return False
    if not (hasattr(b_item, "as_string") and hasattr(t_item, "as_string")):
        return True  # a table split across the file (tomlkit's proxy): look inside
    return bool(b_item.as_string() != t_item.as_string())


def _reflowed_only(path: tuple[str, ...], b_item: Any, o_item: Any, t_item: Any) -> str | None:
    """The side that only reformatted a list of entries the other side changed, if any."""
    arrays = all(isinstance(item, Array) for item in (b_item, o_item, t_item))
    if not arrays or not _listed_by_entry(path):
        return None
    b, o, t = _plain(b_item), _plain(o_item), _plain(t_item)
    text = b_item.as_string()
    if _same(b, t) and not _same(b, o) and t_item.as_string() != text:
        return "theirs"
    if _same(b, o) and not _same(b, t) and o_item.as_string() != text:
        return "ours"
    return None


def _listed_by_entry(path: tuple[str, ...]) -> bool:
    return is_dependency_list(path) or key_function(path) is not None


def _spell_packages_as(ours: Any, other: Any) -> None:
    """Spell `other`'s package keys as ours does, in place and in position, so that
    `flash_mla` on one side and `flash-mla` on the other are one package (PEP 503)."""
    spelled = {normalize_name(key): key for key in ours}
    container = other.value if isinstance(other, Table) else other
    for key in list(other.keys()):
        wanted = spelled.get(normalize_name(key))
        if wanted is not None and wanted != key and wanted not in other:
            if isinstance(container, Container):
                container._replace(key, wanted, other[key])
            else:  # a plain dict (a side without the table)
                other[wanted] = other.pop(key)


def _field_key(field: str) -> Callable[[Any], str]:
    def key_of(value: Any) -> str:
        return f"{field}={value.get(field)}" if isinstance(value, dict) else repr(value)

    return key_of


def _take(ours: Any, theirs: Any, key: str, t_item: Any) -> None:
    """Put theirs' item for `key` into ours: replace in place, delete, or insert after the
    key that precedes it in theirs."""
    if t_item is MISSING:
        del ours[key]
    elif key in ours:
        ours[key] = t_item
    else:
        _insert_key(ours, theirs, key, t_item)


def _insert_key(ours: Any, theirs: Any, key: str, item: Item) -> None:
    container = ours.value if isinstance(ours, Table) else ours
    previous = None
    for other in theirs:
        if other == key:
            break
        if other in ours:
            previous = other
    if isinstance(container, Container) and previous is not None:
        container._insert_after(previous, key, item)
    elif isinstance(container, Container) and len(container) > 0:
        container._insert_at(0, key, item)
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


def _check_toml(texts: tuple[str, str, str]) -> None:
    """tomllib is what uv reads: a side it rejects (a duplicate key that tomlkit would
    raise KeyAlreadyPresent for, say) is refused before anything is merged."""
    for side, text in zip(("base", "ours", "theirs"), texts, strict=True):
        try:
            tomllib.loads(text)
        except ValueError as exc:  # TOMLDecodeError, or an integer of thousands of digits
            raise MergeRefused(f"{side} is not valid TOML ({exc})") from None
        except RecursionError:
            raise MergeRefused(f"{side} nests arrays or tables too deeply to merge") from None


def merge_pyproject(
    base: str, ours: str, theirs: str, textual: Textual | None = None
) -> MergeResult:
    """Merge three pyproject.toml texts. Raises MergeRefused (a ValueError) when one of
    them is not TOML, or when the merged text would not read back with tomllib.

    `textual`: git's own merge of the same three texts; its bytes are preferred whenever
    they mean the same (textual_merge)."""
    # uv reads a file that starts with a byte order mark, tomllib and tomlkit do not:
    # merge without it, then give the result the mark of the side that changed it.
    decides = ours if ours.startswith(BOM) != base.startswith(BOM) else theirs
    bom = BOM if decides.startswith(BOM) else ""
    base, ours, theirs = (t.removeprefix(BOM) for t in (base, ours, theirs))
    if textual:
        textual = Textual(textual.text.removeprefix(BOM), textual.clean)
    result = _merge_checked(base, ours, theirs, textual)
    return replace(result, text=bom + result.text) if result.text is not None else result


def _merge_checked(base: str, ours: str, theirs: str, textual: Textual | None) -> MergeResult:
    _check_toml((base, ours, theirs))
    try:
        result = _merge(base, ours, theirs)
    except TOMLKitError as exc:
        raise MergeRefused(f"tomlkit could not merge the three versions ({exc})") from None
    if result.text is None:
        return result
    text, via = prefer_git_bytes(result.text, textual) if textual else (result.text, "uvdock")
    if via == "uvdock" and result.text not in (ours, theirs):
        text = carry_comments(text, base, theirs)
    return replace(result, text=text, via=via)


def _merge(base: str, ours: str, theirs: str) -> MergeResult:
    if theirs == base or ours == theirs:
        return _trivial(base, ours, ours, "ours")
    if ours == base:
        return _trivial(base, theirs, theirs, "theirs")
    crlf = _uses_crlf(ours)
    if crlf:
        base, ours, theirs = (t.replace("\r\n", "\n") for t in (base, ours, theirs))
    docs = [tomlkit.parse(t) for t in (base, ours, theirs)]
    merge = _Merge()
    merge.table((), docs[0], docs[1], docs[2])
    if merge.conflicts:
        return MergeResult(None, tuple(merge.taken), tuple(merge.conflicts))
    text = tomlkit.dumps(docs[1])
    try:
        tomllib.loads(text)  # what we hand over must read back; a tomlkit bug surfaces here
    except ValueError as exc:
        raise MergeRefused(f"the merged text would not be valid TOML ({exc})") from None
    if crlf:
        text = text.replace("\n", "\r\n")
    return MergeResult(text, tuple(merge.taken), ())


def _trivial(base: str, changed: str, text: str, side: str) -> MergeResult:
    merge = _Merge()
    old, new = tomlkit.parse(base).unwrap(), tomlkit.parse(changed).unwrap()
    merge.report((), old, new, side)
    return MergeResult(text, tuple(merge.taken), ())
