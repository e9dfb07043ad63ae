"""Three-way merge of pyproject.toml (base, ours, theirs), keeping ours' formatting.

From ours' document (tomlkit keeps every byte it is not asked to change) it takes what
theirs changed: lists entry by entry (entries), tables key by key, any other value from
the side that changed it; a value changed on both sides is a conflict, and nothing is
merged. Theirs' items go after the key before them on theirs' side, a `[section]` never
above ours' plain keys (it would take them).
"""

from __future__ import annotations

import operator
import tomllib
from collections.abc import Callable
from typing import Any, NamedTuple

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Array, Item, Table

from uvdock.merge import entries
from uvdock.merge.entries import Conflict, PinClash, Taken, key_of, merge_list
from uvdock.merge.textual import Textual, carry_comments, prefer_git_bytes
from uvdock.project.names import normalize_name

BOM = "\ufeff"  # a UTF-8 byte order mark, decoded
MISSING = object()  # a key absent on one side (None is not a TOML value, but keep it apart)
# Tables keyed by package: each value is one entry, reported and merged whole.
PACKAGE_TABLES: tuple[tuple[str, ...], ...] = (("tool", "uv", "sources"),)
# Arrays of tables merged entry by entry, each entry known by its `name` (an unnamed index
# by its `url`).
KEYED_ARRAYS = (("tool", "uv", "index"), ("tool", "uv", "dependency-metadata"))


class MergeRefused(ValueError):
    """A side, or the merged text, is not TOML as tomllib (uv) reads it: nothing is merged."""


class MergeUnwritable(MergeRefused):
    """Neither the merge's own text nor git's means its decision: write neither."""


class MergeResult(NamedTuple):
    text: str | None  # None when there are conflicts
    taken: tuple[Taken, ...]
    conflicts: tuple[Conflict, ...]
    # Whose bytes `text` is: "git" (its clean merge), "git-hunks" (its hunks resolved from
    # both sides' own lines) or "uvdock" (ours' document with theirs' changes, by tomlkit).
    via: str = "uvdock"
    pins: tuple[PinClash, ...] = ()  # a package the merge left pinned differently in two lists


def dotted(path: tuple[str, ...]) -> str:
    return ".".join(k if k.replace("-", "").replace("_", "").isalnum() else f'"{k}"' for k in path)


def _plain(item: Any) -> Any:
    return None if item is MISSING else item.unwrap() if hasattr(item, "unwrap") else item


def _is_table(item: Any) -> bool:
    return isinstance(item, Table | Container) or type(item).__name__ == "OutOfOrderTableProxy"


class _Merge:
    """Walks ours' document, changing it in place where theirs changed something."""

    def __init__(self) -> None:
        self.taken: list[Taken] = []
        self.conflicts: list[Conflict] = []

    def table(self, path: tuple[str, ...], base: Any, ours: Any, theirs: Any) -> None:
        for other in (base, theirs) if path in PACKAGE_TABLES else ():
            _spell_packages_as(ours, other)
        for key in dict.fromkeys([*ours.keys(), *theirs.keys(), *base.keys()]):
            self.value((*path, key), base.get(key, MISSING), ours, theirs)

    def value(self, path: tuple[str, ...], b_item: Any, ours: Any, theirs: Any) -> None:
        key = path[-1]
        o_item, t_item = ours.get(key, MISSING), theirs.get(key, MISSING)
        b, o, t = _plain(b_item), _plain(o_item), _plain(t_item)
        verdict = entries.decide(b, o, t, operator.eq)
        if (reflowed := _reflowed_only(path, b_item, o_item, t_item)) == "theirs":
            # Theirs only reformatted the list (reflowed it, say) and ours changed its
            # entries: ours' changes go into theirs' layout, which then replaces ours'.
            self.report(path, b, o, "ours")
            _apply_list_plan(merge_list(dotted(path), b, t, o, key_of(path)), t_item, o_item)
            ours[key] = t_item
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
            if t_item is MISSING:
                del ours[key]
            elif key in ours:
                ours[key] = t_item
            else:
                _insert_key(ours, theirs, key, t_item)
        elif (
            isinstance(o_item, Array | AoT) and isinstance(t_item, Array | AoT) and _identity(path)
        ):
            self.array(path, b if isinstance(b, list) else [], o_item, t_item)
        else:
            self.conflicts.append(Conflict(dotted(path), entries.show(o), entries.show(t)))

    def array(self, path: tuple[str, ...], base: list[Any], ours: Any, theirs: Any) -> None:
        plan = merge_list(dotted(path), base, _plain(ours), _plain(theirs), _identity(path))
        self.taken.extend(plan.taken)
        self.conflicts.extend(plan.conflicts)
        if not plan.conflicts:
            _apply_list_plan(plan, ours, theirs)

    def report(self, path: tuple[str, ...], base: Any, new: Any, side: str) -> None:
        """Record what one side changed, entry by entry in lists, key by key in tables."""
        if base == new:
            return
        if isinstance(base, dict) and isinstance(new, dict) and path[:-1] not in PACKAGE_TABLES:
            for key in dict.fromkeys([*base, *new]):
                self.report((*path, key), base.get(key), new.get(key), side)
        elif (identity := key_of(path)) and isinstance(base, list) and isinstance(new, list):
            plan = merge_list(dotted(path), base, base, new, identity)
            self.taken.extend(t._replace(side=side) for t in plan.taken)
        else:
            self.taken.append(Taken(dotted(path), "", entries.change(base, new), side))


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
    if not arrays or key_of(path) is None:
        return None
    b, o, t = _plain(b_item), _plain(o_item), _plain(t_item)
    text = b_item.as_string()
    if b == t and b != o and t_item.as_string() != text:
        return "theirs"
    if b == o and b != t and o_item.as_string() != text:
        return "ours"
    return None


def _spell_packages_as(ours: Any, other: Any) -> None:
    """Spell `other`'s package keys as ours does, in place (PEP 503: `flash_mla` is `flash-mla`)."""
    spelled = {normalize_name(key): key for key in ours}
    container = other.value if isinstance(other, Table) else other
    for key in list(other.keys()):
        if (wanted := spelled.get(normalize_name(key), key)) != key and wanted not in other:
            if isinstance(container, Container):
                container._replace(key, wanted, other[key])
            else:  # a plain dict (a side without the table)
                other[wanted] = other.pop(key)


def _identity(path: tuple[str, ...]) -> Callable[[Any], str] | None:
    """How the entries of the array at `path` are told apart (None: the array is a value)."""
    return key_of(path) or (_table_name if path in KEYED_ARRAYS else None)


def _table_name(value: Any) -> str:
    fields = [value.get("name"), value.get("url")] if isinstance(value, dict) else []
    return next((str(f) for f in fields if isinstance(f, str)), f"value:{value!r}")


def _is_section(item: Any) -> bool:
    """A `[table]` or `[[array of tables]]` of its own: it ends the keys written above it."""
    return isinstance(item, AoT) or (isinstance(item, Table) and not item.is_inline_table())


def _insert_key(ours: Any, theirs: Any, key: str, item: Item) -> None:
    """After the key before it in theirs, among keys of its kind: a section never above
    plain keys (`[tool.uv.workspace]` put first in ours would take `[tool.uv]`'s keys)."""
    container = ours.value if isinstance(ours, Table) else ours
    section = _is_section(item)
    keys = list(theirs)
    kin = [o for o in keys[: keys.index(key)] if o in ours and _is_section(ours.get(o)) == section]
    previous = kin[-1] if kin else None
    body = [i for i, (_, it) in enumerate(getattr(container, "body", ())) if _is_section(it)]
    if isinstance(container, Container) and previous is not None:
        container._insert_after(previous, key, item)
    elif isinstance(container, Container) and (body if section else len(container)):
        container._insert_at(body[0] if section else 0, key, item)
    else:
        ours[key] = item  # appended: after ours' keys, or into an empty table


def _apply_list_plan(plan: entries.ListPlan, ours: Any, theirs: Any) -> None:
    for o_index, t_index in plan.replace:
        ours[o_index] = theirs[t_index]
    for o_index in plan.remove:
        del ours[o_index]
    keys = list(plan.kept)  # the plan stays as it was given
    for t_index, key, after in plan.insert:
        # After its neighbour, and after what ours added there too (as git would).
        position = 0 if after is None else keys.index(after) + 1
        while position < len(keys) and keys[position] in plan.ours_added:
            position += 1
        ours.insert(position, theirs[t_index])
        keys.insert(position, key)
        if isinstance(ours, Array) and "\n" in ours.as_string():
            # An entry added to a multi-line list keeps its trailing comment, and its comma:
            # after a comment-only line tomlkit copies the comma of that line, which has none.
            source, target = (
                next((g for g in getattr(array, "_value", ()) if g.value is array[at]), None)
                for array, at in ((theirs, t_index), (ours, position))
            )
            if source is not None and target is not None:
                target.comment = source.comment if source.comment is not None else target.comment
                target.comma = target.comma if target.comma is not None else source.comma
        # A table added to an array of tables after a blank line keeps it: tomlkit counts
        # that line as the end of the table before, which in ours may lack it.
        if isinstance(ours, AoT) and position > 0 and t_index > 0:
            before = ours[position - 1]
            blank = theirs[t_index - 1].as_string().endswith("\n\n")
            if blank and not before.as_string().endswith("\n\n"):
                before.add(tomlkit.nl())


def merge_pyproject(
    base: str, ours: str, theirs: str, textual: Textual | None = None
) -> MergeResult:
    """Raises MergeRefused (a ValueError) when a side, or the merged text, is not TOML.
    `textual`: git's own merge of the same texts, its bytes preferred when they mean the same."""
    # uv reads a file that starts with a byte order mark, tomllib and tomlkit do not:
    # merge without it, then give the result the mark of the side that changed it.
    decides = ours if ours.startswith(BOM) != base.startswith(BOM) else theirs
    bom = BOM if decides.startswith(BOM) else ""
    base, ours, theirs = (t.removeprefix(BOM) for t in (base, ours, theirs))
    # Each side as tomllib (uv) reads it: one it rejects (a duplicate key, which tomlkit
    # would raise KeyAlreadyPresent for) is refused before anything is merged.
    sides = []
    for side, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        try:
            sides.append(tomllib.loads(text))
        except ValueError as exc:  # TOMLDecodeError, or an integer of thousands of digits
            raise MergeRefused(f"{side} is not valid TOML ({exc})") from None
        except RecursionError:
            raise MergeRefused(f"{side} nests arrays or tables too deeply to merge") from None
    try:
        result, decided = _merge(base, ours, theirs)
    except TOMLKitError as exc:
        raise MergeRefused(f"tomlkit could not merge the three versions ({exc})") from None
    if result.text is None:
        return result
    if decided is None:  # one side's own text: its data is the decision
        decided = sides[1] if result.text == ours else sides[2]
    text, via = result.text, "uvdock"
    if textual:
        git = Textual(textual.text.removeprefix(BOM), textual.clean)
        text, via = prefer_git_bytes(decided, text, git)
    if via == "uvdock" and result.text not in (ours, theirs):
        text = carry_comments(text, base, theirs)
    # The text is what gets written: it must mean exactly what the merge decided.
    try:
        written = tomllib.loads(text)
    except ValueError as exc:  # a tomlkit bug (git's bytes were compared)
        raise MergeRefused(f"the merged text would not be valid TOML ({exc})") from None
    if written != decided:
        keys = ", ".join(_differing_keys(decided, written)[:5])
        raise MergeUnwritable(
            f"the merged text would not mean what the merge decided (at {keys}), "
            "and git's own merge does not either"
        )
    pins = entries.new_clashes(decided, sides[1], sides[2])
    return result._replace(text=bom + text, via=via, pins=pins)


def _differing_keys(a: Any, b: Any, path: tuple[str, ...] = ()) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            found
            for key in dict.fromkeys([*a, *b])
            for found in _differing_keys(a.get(key, MISSING), b.get(key, MISSING), (*path, key))
        ]
    return [] if a == b else [dotted(path) or "(the whole file)"]


def _merge(base: str, ours: str, theirs: str) -> tuple[MergeResult, dict[str, Any] | None]:
    """The result, and the data it decided (None: the result is one side's own text)."""
    merge = _Merge()
    if base in (ours, theirs) or ours == theirs:
        side, text = ("ours", ours) if theirs in (base, ours) else ("theirs", theirs)
        merge.report((), tomlkit.parse(base).unwrap(), tomlkit.parse(text).unwrap(), side)
        return MergeResult(text, tuple(merge.taken), ()), None
    crlf = "\r\n" in ours and ours.count("\n") == ours.count("\r\n")
    if crlf:
        base, ours, theirs = (t.replace("\r\n", "\n") for t in (base, ours, theirs))
    docs = [tomlkit.parse(t) for t in (base, ours, theirs)]
    merge.table((), docs[0], docs[1], docs[2])
    if merge.conflicts:
        return MergeResult(None, tuple(merge.taken), tuple(merge.conflicts)), {}
    text = tomlkit.dumps(docs[1]).replace("\n", "\r\n" if crlf else "\n")  # read back by the caller
    return MergeResult(text, tuple(merge.taken), ()), docs[1].unwrap()
