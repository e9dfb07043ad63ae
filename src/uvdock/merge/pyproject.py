"""Three-way merge of pyproject.toml (base, ours, theirs), keeping ours' formatting.

The merge starts from ours' document (tomlkit keeps every byte it is not asked to
change) and brings in what theirs changed since base:

- dependency lists are merged entry by entry (entry_merge: name + marker), and so are
  uv's set-like lists in `[tool.uv]` (uv_lists: names, markers, sets of conflicts);
- `tool.uv.index` entries by `name`; tables key by key (so `tool.uv.sources` merges
  package by package, and two new dependency groups merge);
- any other value is taken from the side that changed it; changed differently on both
  sides is a conflict, reported with its TOML path and both values, and nothing is merged.

Pure: three texts in, a text (or the conflicts) out. tomlkit is imported here (and in
placement, which puts items into ours' document) only, so
only the commands that merge pay for it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Array, Table

from uvdock.merge.comments import carry_comments
from uvdock.merge.entries import Conflict, Taken, decide, merge_list, show
from uvdock.merge.pins import PinClash, new_clashes
from uvdock.merge.placement import MISSING, apply_list_plan, take
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
# Arrays of tables merged entry by entry, each entry known by its `name` (an unnamed index
# by its `url`).
KEYED_ARRAYS: tuple[tuple[str, ...], ...] = (
    ("tool", "uv", "index"),
    ("tool", "uv", "dependency-metadata"),
)


class MergeRefused(ValueError):
    """A side is not TOML as tomllib reads it (a duplicate key, say), or the merged text
    would not be: nothing is merged; the caller falls back to git's markers or refuses."""


class MergeUnwritable(MergeRefused):
    """The merge decided, but neither its own text nor git's means the decision: the
    caller must not write git's clean merge either (conflict markers, or a refusal)."""


@dataclass(frozen=True)
class MergeResult:
    text: str | None  # None when there are conflicts
    taken: tuple[Taken, ...]
    conflicts: tuple[Conflict, ...]
    # Whose bytes `text` is: "git" (git merge-file's clean result, same data), "git-hunks"
    # (git's result with each conflicted hunk resolved from both sides' own lines) or
    # "uvdock" (ours' document with theirs' changes applied by tomlkit).
    via: str = "uvdock"
    pins: tuple[PinClash, ...] = ()  # a package the merge left pinned differently in two lists


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
            take(ours, theirs, key, t_item)
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
            plan = merge_list(name, base, _plain(ours), _plain(theirs), _table_name)
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


def _table_name(value: Any) -> str:
    """An entry of an array of tables: its name (or an unnamed index's url)."""
    if isinstance(value, dict):
        for field in ("name", "url"):
            if isinstance(value.get(field), str):
                return str(value[field])
    return f"value:{value!r}"


def _check_toml(texts: tuple[str, str, str]) -> list[dict[str, Any]]:
    """Each side's data as tomllib (what uv) reads it: a side it rejects (a duplicate key
    that tomlkit would raise KeyAlreadyPresent for, say) is refused before anything is
    merged."""
    data = []
    for side, text in zip(("base", "ours", "theirs"), texts, strict=True):
        try:
            data.append(tomllib.loads(text))
        except ValueError as exc:  # TOMLDecodeError, or an integer of thousands of digits
            raise MergeRefused(f"{side} is not valid TOML ({exc})") from None
        except RecursionError:
            raise MergeRefused(f"{side} nests arrays or tables too deeply to merge") from None
    return data


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
    sides = _check_toml((base, ours, theirs))
    try:
        result, decided = _merge(base, ours, theirs)
    except TOMLKitError as exc:
        raise MergeRefused(f"tomlkit could not merge the three versions ({exc})") from None
    if result.text is None:
        return result
    if decided is None:  # one side's own text: its data is the decision
        decided = sides[1] if result.text == ours else sides[2]
    text, via = (
        prefer_git_bytes(decided, result.text, textual) if textual else (result.text, "uvdock")
    )
    if via == "uvdock" and result.text not in (ours, theirs):
        text = carry_comments(text, base, theirs)
    _read_back(text, decided)
    pins = new_clashes(decided, sides[1], sides[2], DEPENDENCY_LISTS)
    return replace(result, text=text, via=via, pins=pins)


def _read_back(text: str, decided: dict[str, Any]) -> None:
    """The text is what gets written: it must mean exactly what the merge decided."""
    try:
        written = tomllib.loads(text)
    except ValueError as exc:  # a tomlkit bug (git's bytes were compared)
        raise MergeRefused(f"the merged text would not be valid TOML ({exc})") from None
    if written != decided:
        keys = ", ".join(differing_keys(decided, written)[:5])
        raise MergeUnwritable(
            f"the merged text would not mean what the merge decided (at {keys}), "
            "and git's own merge does not either"
        )


def differing_keys(a: Any, b: Any, path: tuple[str, ...] = ()) -> list[str]:
    """The dotted keys whose values differ between two TOML documents' data."""
    if isinstance(a, dict) and isinstance(b, dict):
        found: list[str] = []
        for key in dict.fromkeys([*a, *b]):
            found += differing_keys(a.get(key, MISSING), b.get(key, MISSING), (*path, key))
        return found
    return [] if a == b else [dotted(path) or "(the whole file)"]


def _merge(base: str, ours: str, theirs: str) -> tuple[MergeResult, dict[str, Any] | None]:
    """The result, and the data it decided (tomlkit's model of the merged document; None
    when the result is one side's own text)."""
    if theirs == base or ours == theirs:
        return _trivial(base, ours, ours, "ours"), None
    if ours == base:
        return _trivial(base, theirs, theirs, "theirs"), None
    crlf = _uses_crlf(ours)
    if crlf:
        base, ours, theirs = (t.replace("\r\n", "\n") for t in (base, ours, theirs))
    docs = [tomlkit.parse(t) for t in (base, ours, theirs)]
    merge = _Merge()
    merge.table((), docs[0], docs[1], docs[2])
    if merge.conflicts:
        return MergeResult(None, tuple(merge.taken), tuple(merge.conflicts)), {}
    text = tomlkit.dumps(docs[1])  # read back by the caller, whichever text it keeps
    if crlf:
        text = text.replace("\n", "\r\n")
    return MergeResult(text, tuple(merge.taken), ()), docs[1].unwrap()


def _trivial(base: str, changed: str, text: str, side: str) -> MergeResult:
    merge = _Merge()
    old, new = tomlkit.parse(base).unwrap(), tomlkit.parse(changed).unwrap()
    merge.report((), old, new, side)
    return MergeResult(text, tuple(merge.taken), ())
