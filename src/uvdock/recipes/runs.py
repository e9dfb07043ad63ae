"""What a recipe means, the view its edits are verified through (formats/yaml.py: edit_changes).

A recipe runs, for each entry of the top-level `products` and each `test_case`, each row of the
entry's `products` once per environment and platform (the row's, else the spec's), in each of
its scopes. The view keeps everything outside `products` as it is and reads `products` as one
list of scopes per run (case, environment, platform, the entry's and the row's other keys), in
file order: a split row or entry reads as it did before. `mark-broken` must move exactly the
asked scopes to their broken names, `unmark` must leave every run but the case's own as it was.
A row YAML reads but the line editor cannot edit (a flow mapping, a `<<:` merge, an alias, a
duplicate key) would be left as it was, and a shared anchor would change another case: both are
refused with file and line, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable

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

LTS_ENVIRONMENT = "lts"  # recipe rows of `environment: [lts]` change only with --lts
_NULL, _STR = "tag:yaml.org,2002:null", "tag:yaml.org,2002:str"
_SHAPES = "a flow mapping, a `<<:` merge key, an alias, a block list or a duplicate key"
Who = tuple[str, str | None, str | None]  # case, environment, platform
Asked = Callable[[Who, str], bool]  # whether a scope of a run was asked to change


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

    def __init__(self, skip: Callable[[str, str | None], bool] = lambda case, env: False):
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
                scope, found = own.get("scope"), words(own.get("scope"))
                scopes: list[YValue] = [YScalar(row.line, _STR, s) for s in found or ()]
                if found is None and scope is not None:
                    scopes = [scope]  # no list of strings: compared as it is
                null: list[YValue] = [YScalar(row.line, _NULL, "")]  # no scope, or `[]`
                rest = repr((entry_rest, _rest(row, ("environment", "scope", "platforms"))))
                for case in cases:
                    for env in _words(own.get("environment")) or (None,):
                        for platform in () if self.skip(case, env) else platforms or (None,):
                            key = repr((case, env, platform)) + rest
                            self.who[key] = (case, env, platform)
                            runs.setdefault(key, []).extend(scopes or null)
        items: dict[str, YValue] = {k: YSeq(0, v) for k, v in runs.items()}
        return YMap(doc.line, {**doc.items, "products": YMap(products.line, items)})


def verify_edit(display: str, old: str, new: str, asked: Asked, runs: Runs, suffix: str) -> None:
    """Refuse unless, as YAML reads them, `new` is `old` with exactly the asked scopes broken."""
    edit = edit_changes(display, old, new, runs)
    expected: dict[tuple[str | int, ...], tuple[Who, YScalar]] = {}
    before = {
        p: s for n, doc in enumerate(edit.before) for p, s in scalar_leaves(doc, (n,)).items()
    }
    for path, was in before.items():
        who = runs.who.get(str(path[2])) if path[1:2] == ("products",) and len(path) == 4 else None
        if who and was.text and asked(who, was.text):
            expected[path] = (who, was)
    for path, (who, was) in expected.items():
        if edit.after[path].text != was.value + suffix:
            raise refusal(
                display,
                was.line,
                f"as YAML reads this row, {who[0]} runs in scope {was.value}"
                f" ({who[1] or 'no environment'}, {who[2] or 'no platform'}), and the edit would"
                f" not move it as asked: its shape ({_SHAPES}) is one uvdock cannot edit"
                " exactly; edit it by hand",
            )
    for path, was in edit.changed.items():
        if path not in expected:
            raise refusal(
                display,
                was.line,
                f"the edit would also change `{was.value}` here, which was not asked (an anchor"
                " or alias shared with another case?)",
            )
