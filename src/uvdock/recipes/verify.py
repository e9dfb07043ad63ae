"""Verify a recipe edit with a real YAML parser (formats/yaml.py): what runs where, as YAML reads it.

A recipe means a set of runs: for each entry of the top-level `products` (the last such key,
as YAML reads it), each `test_case`, and each row of its `products`, one run per environment,
platform (the row's, else the spec's) and scope, together with everything else the entry and
the row say. `mark-broken` must move exactly the selected runs to their broken scope; `unmark`
may only move the case's broken runs back; both leave everything else as it was (rows may be
split: runs are counted, not placed). A row YAML reads but the line editor cannot edit (a flow
mapping, a `<<:` merge key, an alias, a duplicate key) would be left as it was: refused with
its file and line, like a change to a run nobody asked for (an anchored scope shared with
another case). Nothing is written then.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from uvdock.errors import InputRefused
from uvdock.formats.yaml import YMap, YSeq, YValue, load, plain, words

# (case, environment, platform, scope, the entry's other keys, the row's other keys)
Run = tuple[str, str | None, str | None, str | None, object, object]
_ROW_KEYS = ("environment", "scope", "platforms")
_SHAPES = "a flow mapping, a `<<:` merge key, an alias, a block list or a duplicate key"


class Runs:
    """The runs of one recipe text, each with the line of its row; and everything else."""

    def __init__(self, text: str, display: str, *, after_edit: bool = False) -> None:
        self.counts: Counter[Run] = Counter()
        self.lines: dict[Run, int] = {}
        docs = load(text, display, after_edit=after_edit)
        doc = docs[0] if len(docs) == 1 and isinstance(docs[0], YMap) else None
        if doc is None:
            self.rest: object = tuple(plain(d) for d in docs)
            return
        self.rest = plain(YMap(0, {k: v for k, v in doc.items.items() if k != "products"}))
        spec = doc.items.get("spec")
        spec_platforms = _list(spec.items.get("platforms")) if isinstance(spec, YMap) else ()
        products = doc.items.get("products")
        entries = products.items if isinstance(products, YSeq) else []
        if products is not None and not isinstance(products, YSeq):
            self.rest = (self.rest, plain(products))
        for entry in entries:
            self._entry(entry, spec_platforms)

    def _entry(self, entry: YValue, spec_platforms: tuple[str, ...]) -> None:
        if not isinstance(entry, YMap):
            self._add(("", None, None, None, plain(entry), None), entry.line)
            return
        cases = _list(entry.items.get("test_case")) or ("",)
        entry_rest = plain(
            YMap(0, {k: v for k, v in entry.items.items() if k not in ("test_case", "products")})
        )
        rows = entry.items.get("products")
        for row in rows.items if isinstance(rows, YSeq) else []:
            if not isinstance(row, YMap):
                for case in cases:
                    self._add((case, None, None, None, entry_rest, plain(row)), row.line)
                continue
            own = row.items.get("platforms")
            platforms = _list(own) if own is not None else spec_platforms
            row_rest = plain(YMap(0, {k: v for k, v in row.items.items() if k not in _ROW_KEYS}))
            for case in cases:
                for environment in _list(row.items.get("environment")) or (None,):
                    for platform in platforms or (None,):
                        for scope in _list(row.items.get("scope")) or (None,):
                            run = (case, environment, platform, scope, entry_rest, row_rest)
                            self._add(run, row.line)

    def _add(self, run: Run, line: int) -> None:
        self.counts[run] += 1
        self.lines.setdefault(run, line)


def _list(value: YValue | None) -> tuple[str, ...]:
    """A list of strings as YAML reads it; any other shape as one opaque word (compared as is)."""
    found = words(value)
    if found is not None:
        return found
    assert value is not None
    return (repr(plain(value)),)


def _line_before(before: Runs, run: Run) -> int | None:
    """The line, in the file as it is, of the row a changed run comes from (scope aside)."""
    return next(
        (line for old, line in before.lines.items() if old[:3] == run[:3] and old[4:] == run[4:]),
        None,
    )


def verify_recipe_edit(
    display: str,
    old: str,
    new: str,
    expected: Callable[[Run], Run],
    free: Callable[[Run], bool] = lambda run: False,
) -> None:
    """Refuse unless `new` holds the runs of `old` mapped by `expected`.

    Runs for which `free` holds, before or after, are not compared (unmark: the case's own
    runs, which its `# was: [...]` list may restore to any scopes).
    """
    before = Runs(old, display)
    after = Runs(new, display, after_edit=True) if new != old else before
    if after.rest != before.rest:
        raise InputRefused(
            f"{display}: the edit would change YAML outside the products list; nothing was changed"
        )
    wanted: Counter[Run] = Counter()
    origin: dict[Run, tuple[Run, int]] = {}
    for run, count in before.counts.items():
        target = expected(run)
        if not free(target):
            wanted[target] += count
            origin.setdefault(target, (run, before.lines[run]))
    got: Counter[Run] = Counter(
        {run: count for run, count in after.counts.items() if not free(run)}
    )
    for target in wanted - got:
        run, line = origin[target]
        if target == run:  # meant to stay as it is, and the edit moved it
            raise _unasked(display, line, run)
        raise InputRefused(
            f"{display}:{line}: as YAML reads this row, {run[0]} runs in scope {run[3]}"
            f" ({run[1] or 'no environment'}, {run[2] or 'no platform'}), and the edit would"
            f" not move it as asked: its shape ({_SHAPES}) is one uvdock cannot edit exactly;"
            " edit it by hand; nothing was changed"
        )
    for extra in got - wanted:
        raise _unasked(display, _line_before(before, extra) or after.lines[extra], extra)


def _unasked(display: str, line: int, run: Run) -> InputRefused:
    return InputRefused(
        f"{display}:{line}: the edit would also change this row ({run[0]} in scope {run[3]}),"
        " which was not asked (an anchor or alias shared with another case?); nothing was changed"
    )
