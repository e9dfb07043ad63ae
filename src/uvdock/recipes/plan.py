"""A recipe edit (mark, unmark) as a plan: steps over a recipe's lines, each re-parsing the file
and acting on the first thing left to do (the files are small; this keeps every line index
honest after an insertion), verified through what the recipe means.

The view (formats/yaml.py: edit_changes) keeps everything outside `products` and reads
`products` as one list of scopes per run (case, environment, platform, the entry's and the row's
other keys) in file order, so a split row or entry reads as before. `mark-broken` must move
exactly the asked scopes to their broken names, `unmark` must leave every run but the case's own
as it was. A row the line editor cannot edit exactly (a flow mapping, a `<<:` merge, an alias, a
duplicate key), or a shared anchor that would change another case, is refused with file and
line, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from uvdock.files.edit import FileEdit
from uvdock.files.textlines import ending_of
from uvdock.formats.yaml import (
    YMap,
    YScalar,
    YSeq,
    YValue,
    edit_changes,
    plain,
    refusal,
    scalar_leaves,
    words,
)
from uvdock.recipes.parse import Recipe, body_of, parse

_MAX_STEPS = 10_000  # a guard: every step removes one thing left to do
LTS_ENVIRONMENT = "lts"  # recipe rows of `environment: [lts]` change only with --lts
_NULL, _STR = "tag:yaml.org,2002:null", "tag:yaml.org,2002:str"
_SHAPES = "a flow mapping, a `<<:` merge key, an alias, a block list or a duplicate key"
Who = tuple[str, str | None, str | None]  # case, environment, platform
Asked = Callable[[Who, str], bool]  # whether a scope of a run was asked to change
Skip = Callable[[str, str | None], bool]  # whether the view leaves out a case's run in an env
_NO_SKIP: Skip = lambda case, env: False  # noqa: E731


def _words(value: YValue | None) -> tuple[str, ...]:
    """A list of strings; any other shape as one opaque word (compared as it is)."""
    found = words(value)
    return (repr(plain(value)),) if found is None and value is not None else found or ()


def _rest(value: YValue, keys: tuple[str, ...]) -> object:
    if isinstance(value, YMap):
        return plain(YMap(0, {k: v for k, v in value.items.items() if k not in keys}))
    return plain(value)


class Runs:
    """The view: `products` as scopes by run. Runs `skip` holds for are left out."""

    def __init__(self, skip: Skip = _NO_SKIP):
        self.skip = skip
        self.who: dict[str, Who] = {}  # a run's key in the view -> whose run it is

    def __call__(self, doc: YValue) -> YValue:
        products = doc.items.get("products") if isinstance(doc, YMap) else None
        if not isinstance(doc, YMap) or not isinstance(products, YSeq):
            return doc
        spec = doc.items.get("spec")
        spec_platforms = _words(spec.items.get("platforms")) if isinstance(spec, YMap) else ()
        runs: dict[str, list[YValue]] = {}
        for entry in products.items:
            fields = entry.items if isinstance(entry, YMap) else {"products": YSeq(0, [entry])}
            cases = _words(fields.get("test_case")) or ("",)
            entry_rest = _rest(entry, ("test_case", "products"))
            rows = fields.get("products")
            for row in rows.items if isinstance(rows, YSeq) else []:
                own = row.items if isinstance(row, YMap) else {}
                platforms = _words(own["platforms"]) if "platforms" in own else spec_platforms
                found, at = words(own.get("scope")), row.line  # None: not strings, kept as is
                scopes = [own["scope"]] if found is None else [YScalar(at, _STR, s) for s in found]
                scopes = scopes or [YScalar(at, _NULL, "")]  # no scope, or `[]`
                rest = repr((entry_rest, _rest(row, ("environment", "scope", "platforms"))))
                for case in cases:
                    for env in _words(own.get("environment")) or (None,):
                        for platform in () if self.skip(case, env) else platforms or (None,):
                            key = repr((case, env, platform)) + rest
                            self.who[key] = (case, env, platform)
                            runs.setdefault(key, []).extend(scopes)
        items: dict[str, YValue] = {k: YSeq(0, v) for k, v in runs.items()}
        return YMap(doc.line, {**doc.items, "products": YMap(products.line, items)})


def verify_edit(edit: FileEdit, asked: Asked, runs: Runs, suffix: str) -> None:
    """Refuse unless, as YAML reads them, the new text is the old one with exactly the asked
    scopes broken."""
    found = edit_changes(edit.name, edit.old, edit.new, runs)
    for path, was in scalar_leaves(YSeq(0, found.before)).items():
        who = runs.who.get(str(path[2])) if path[1:2] == ("products",) and len(path) == 4 else None
        if who and was.text and asked(who, was.text):
            if found.after[path].text != was.value + suffix:
                raise refusal(
                    edit.name,
                    was.line,
                    f"as YAML reads this row, {who[0]} runs in scope {was.value}"
                    f" ({who[1] or 'no environment'}, {who[2] or 'no platform'}), and the edit"
                    f" would not move it as asked: its shape ({_SHAPES}) is one uvdock cannot"
                    " edit exactly; edit it by hand",
                )
        elif path in found.changed:
            raise refusal(
                edit.name,
                was.line,
                f"the edit would also change `{was.value}` here, which was not asked (an anchor"
                " or alias shared with another case?)",
            )


class Change(NamedTuple):
    path: str
    line: int  # 1-based, in the new text
    what: str


class Plan(NamedTuple):
    edits: list[FileEdit]
    changes: list[Change]
    notes: list[str]  # rows left alone, and why

    @property
    def changed_edits(self) -> list[FileEdit]:
        return [e for e in self.edits if e.changed]

    def as_json(self, case: str) -> dict[str, object]:
        return {
            "case": case,
            "files": [e.name for e in self.changed_edits],
            "changes": [c._asdict() for c in self.changes],
            "notes": self.notes,
        }

    def report(self, dry_run: bool) -> list[str]:
        lines = [f"{c.path}:{c.line}: {c.what}" for c in self.changes] + self.notes
        if count := len(self.changed_edits):
            done = "would change" if dry_run else "changed"
            lines.append(f"{done} {count} file(s)" + " (dry run: nothing written)" * dry_run)
        return lines


def replace_span(lines: list[str], start: int, end: int, new: Sequence[str]) -> None:
    """lines[start:end] = new, keeping the file's final newline (or its absence) as it was."""
    at_end = end >= len(lines)
    final_eol = bool(lines) and bool(ending_of(lines[-1]))
    default = next((ending_of(line) for line in lines if ending_of(line)), "\n")
    lines[start:end] = [line if ending_of(line) else line + default for line in new]
    if at_end and lines and not final_eol:
        lines[-1] = body_of(lines[-1])


Step = Callable[[Recipe, list[str]], Change | None]


def run_steps(
    recipes: Sequence[Recipe], act: Step, asked: Asked, suffix: str, skip: Skip = _NO_SKIP
) -> tuple[list[FileEdit], list[Change]]:
    """Each recipe's edit, step after step until `act` has nothing left to do, verified through
    the runs `skip` does not leave out."""
    edits: list[FileEdit] = []
    changes: list[Change] = []
    for recipe in recipes:
        lines, current = list(recipe.lines), recipe
        for _ in range(_MAX_STEPS):
            if (change := act(current, lines)) is None:
                break
            changes.append(change)
            current = parse(recipe.path, recipe.display, "".join(lines))
        edits.append(FileEdit(recipe.path, recipe.text, "".join(lines), recipe.display))
        if edits[-1].changed:
            verify_edit(edits[-1], asked, Runs(skip), suffix)
    return edits, changes
