"""Where a case runs (`recipe show`), and the marks that say a row is broken: mark-broken writes
them, unmark and show read them, leniently (people write the same marks by hand)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from uvdock.recipes.parse import Recipe, Row, body_of

# Markers uvdock writes so that `recipe unmark` can restore the original bytes.
# The team writes the same comment by hand with an em dash (or an en dash) as often as "-".
BROKEN_COMMENT = re.compile(
    r"^[ \t]*# Broken: .*[-\u2013\u2014] *see issue #(?P<issue>\d+)\.?[ \t]*$"
)
WAS_SUFFIX = re.compile(r"^(?P<rest>.*)  # was: \[(?P<old>[^\]]*)\]$")
# `# was: [...]` as people write it (one space or none before it, spaces after it).
LOOSE_WAS_SUFFIX = re.compile(r"^(?P<rest>.*?)[ \t]*# was: \[(?P<old>[^\]]*)\][ \t]*$")
KEPT_MARKER = "  # uvdock-kept: "
SPLIT_MARKER = "  # uvdock-split: "
SPLIT_MARKERS = re.compile(r"  # uvdock-(kept|split): ")
ADDED = "(added)"  # a split marker's original when the line did not exist before


def _quoted(raw: str) -> bool:
    return len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\""


def broken(raw: str, suffix: str) -> str:
    return raw[:-1] + suffix + raw[-1] if _quoted(raw) else raw + suffix


def unbroken(raw: str, suffix: str) -> str:
    end = len(raw) - _quoted(raw)  # before the closing quote
    inner = raw[len(raw) - end : end]
    if not inner.endswith(suffix) or inner == suffix:
        return raw
    return raw[: end - len(suffix)] + raw[end:]


def split_marker(body: str) -> tuple[str, str] | None:
    """("kept" | "split", original line without indentation) of the first marker on a line."""
    found = SPLIT_MARKERS.search(body)
    return (found[1], body[found.end() :]) if found else None


class Placement(NamedTuple):  # one row of one entry
    path: str
    line: int  # 1-based, the row's scope line (or its first line)
    environments: tuple[str, ...]
    scopes: tuple[str, ...]
    platforms: tuple[str, ...]
    inherited_platforms: bool
    issue: int | None  # the issue of a uvdock mark on this row

    def as_json(self) -> dict[str, object]:
        return dict(zip(_JSON_KEYS, self, strict=True))


# Placement's fields, in order, by the names `recipe show --json` has always used.
_JSON_KEYS = ("path", "line", "environment", "scope", "platforms", "platforms_inherited", "issue")


def broken_comment_line(recipe: Recipe, row: Row) -> int | None:
    """The `# Broken: ... see issue #N.` line right above the row's scope line or the row."""
    for index in (row.scope_line, row.start):
        if index and BROKEN_COMMENT.match(body_of(recipe.lines[index - 1])):
            return index - 1
    return None


def is_marked(recipe: Recipe, row: Row, suffix: str = "-broken") -> bool:
    """A row broken by uvdock or by hand: a broken scope, or a `# was:` list on its scope."""
    scope = row.scope_line
    return scope is not None and (
        LOOSE_WAS_SUFFIX.match(body_of(recipe.lines[scope])) is not None
        or any(s.endswith(suffix) for s in row.scopes)
    )


def marked_issue(recipe: Recipe, row: Row) -> int | None:
    comment = broken_comment_line(recipe, row) if is_marked(recipe, row) else None
    found = BROKEN_COMMENT.match(body_of(recipe.lines[comment])) if comment is not None else None
    return int(found["issue"]) if found else None


def placements(recipes: Iterable[Recipe], case: str) -> list[Placement]:
    return [
        Placement(
            recipe.display,
            (row.start if row.scope_line is None else row.scope_line) + 1,
            row.environments,
            row.scopes,
            row.platforms,
            "platforms" not in row.keys,
            marked_issue(recipe, row),
        )
        for recipe in recipes
        for entry in recipe.entries_of(case)
        for row in entry.rows
    ]


class CaseSummary(NamedTuple):
    case: str
    files: tuple[str, ...]
    scopes: dict[str, tuple[str, ...]]  # environment -> scopes, in file order, each once


def case_summaries(recipes: Sequence[Recipe]) -> list[CaseSummary]:
    """Every case with its files and scopes, in one pass over every entry (asking each case's
    placements would be quadratic: a recipe tree of 8000 cases took seconds)."""
    files: dict[str, dict[str, None]] = {}
    scopes: dict[str, dict[str, dict[str, None]]] = {}
    for recipe in recipes:
        for entry in recipe.entries:
            for case in entry.cases:
                files.setdefault(case, {}).setdefault(recipe.display)
                per_env = scopes.setdefault(case, {})
                for row in entry.rows:
                    for environment in row.environments or ("",):
                        per_env.setdefault(environment, {}).update(dict.fromkeys(row.scopes))
    return [
        CaseSummary(case, tuple(files[case]), {e: tuple(s) for e, s in scopes[case].items()})
        for case in sorted(files)
    ]
