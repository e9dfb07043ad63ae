"""Marks on recipe rows: the comments and suffixes that say a row is broken, and reading them back.

`recipe mark-broken` writes them (recipes/mark.py), `recipe unmark` reads them to restore the
original bytes (recipes/unmark.py), and `recipe show` reports the issue a marked row names
(`placements`). People write the same marks by hand, so reading them is lenient.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
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
ADDED = "(added)"  # a split marker's original when the line did not exist before


def split_marker(body: str) -> tuple[str, str] | None:
    """("kept" | "split", original line without indentation) of the first marker on a line."""
    found = [
        (body.find(m), kind, m) for kind, m in (("kept", KEPT_MARKER), ("split", SPLIT_MARKER))
    ]
    present = [f for f in found if f[0] >= 0]
    if not present:
        return None
    position, kind, marker = min(present)
    return kind, body[position + len(marker) :]


class Placement(NamedTuple):
    """Where a case runs: one row of one entry, as `recipe show` reports it."""

    path: str
    line: int  # 1-based, the row's scope line (or its first line)
    environments: tuple[str, ...]
    scopes: tuple[str, ...]
    platforms: tuple[str, ...]
    inherited_platforms: bool
    issue: int | None  # the issue of a uvdock mark on this row

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "environment": list(self.environments),
            "scope": list(self.scopes),
            "platforms": list(self.platforms),
            "platforms_inherited": self.inherited_platforms,
            "issue": self.issue,
        }


def broken_comment_line(recipe: Recipe, row: Row) -> int | None:
    """The `# Broken: ... see issue #N.` line right above the row's scope line or the row."""
    for index in (row.scope_line, row.start):
        if index and BROKEN_COMMENT.match(body_of(recipe.lines[index - 1])):
            return index - 1
    return None


def is_marked(recipe: Recipe, row: Row, suffix: str = "-broken") -> bool:
    """A row broken by uvdock or by hand: a broken scope, or a `# was:` list on its scope."""
    scope = row.scope_line
    if scope is None:
        return False
    was = LOOSE_WAS_SUFFIX.match(body_of(recipe.lines[scope]))
    return was is not None or any(s.endswith(suffix) for s in row.scopes)


def marked_issue(recipe: Recipe, row: Row) -> int | None:
    comment = broken_comment_line(recipe, row) if is_marked(recipe, row) else None
    found = BROKEN_COMMENT.match(body_of(recipe.lines[comment])) if comment is not None else None
    return int(found["issue"]) if found else None


def placements(recipes: Iterable[Recipe], case: str) -> list[Placement]:
    found: list[Placement] = []
    for recipe in recipes:
        for entry in recipe.entries_of(case):
            for row in entry.rows:
                line = row.scope_line if row.scope_line is not None else row.start
                found.append(
                    Placement(
                        path=recipe.display,
                        line=line + 1,
                        environments=row.environments,
                        scopes=row.scopes,
                        platforms=row.platforms,
                        inherited_platforms="platforms" not in row.keys,
                        issue=marked_issue(recipe, row),
                    )
                )
    return found
