"""`recipe unmark`: undo the marks of recipes/mark.py, restoring the original bytes.

Top to bottom, one step at a time: a case split out of an entry is joined back first, then
split rows, then scopes are restored from `# was:`. Marks made by hand are undone too: scopes
ending in the broken suffix go back to their base names (or to the `# was: [...]` list), and
a `# Broken: ... see issue #N.` comment above the row (any dash) goes with them.
"""

from __future__ import annotations

from collections.abc import Sequence

from uvdock.errors import InputRefused
from uvdock.files.textlines import ending_of
from uvdock.recipes import marks
from uvdock.recipes.marks import ADDED, broken_comment_line, placements, split_marker
from uvdock.recipes.parse import Entry, Recipe, Row, body_of, flow_list, indent_of, parse
from uvdock.recipes.plan import LTS_ENVIRONMENT, Change, Plan, replace_span, run_steps


def _join(lines: list[str], split: Entry | Row, kept: int, original: str) -> None:
    """Drop the split copy, and put the kept one's marked line back as it was."""
    replace_span(lines, split.start, split.end, [])
    if original == ADDED:
        replace_span(lines, kept, kept + 1, [])
    else:
        lines[kept] = " " * indent_of(lines[kept]) + original + ending_of(lines[kept])


def _undo_entry_split(
    recipe: Recipe, lines: list[str], entries: Sequence[Entry], at: int, original: str
) -> Change:
    split = entries[at]
    for kept in reversed(entries[:at]):
        marker = split_marker(body_of(recipe.lines[kept.case_line]))
        if marker is not None and marker[0] == "split":
            continue  # another case split out of the same entry later sits in between
        if marker is None:
            break
        if marker[1] != original:
            later = ", ".join(kept.cases)
            raise InputRefused(
                f"{recipe.display}:{split.case_line + 1}: a case was split out of this entry later",
                hint=f"unmark the case(s) split after it first (the entry now holds [{later}])",
            )
        _join(lines, split, kept.case_line, original)
        return Change(
            recipe.display, kept.case_line + 1, f"joined {split.cases[0]} back into its entry"
        )
    raise InputRefused(
        f"{recipe.display}:{split.case_line + 1}: the entry it was split from is gone"
    )


def _undo_row_split(
    recipe: Recipe, lines: list[str], rows: Sequence[Row], at: int, key: str, original: str
) -> Change:
    split = rows[at]
    kept_index = rows[at - 1].keys.get(key) if at > 0 else None
    kept = split_marker(body_of(recipe.lines[kept_index])) if kept_index is not None else None
    if kept_index is None or kept != ("kept", original):
        raise InputRefused(f"{recipe.display}:{split.start + 1}: the row it was split from changed")
    _join(lines, split, kept_index, original)
    return Change(recipe.display, split.start + 1, f"joined the {key} split back")


def _unmark_row(
    recipe: Recipe, lines: list[str], row: Row, suffix: str, lts: bool
) -> Change | None:
    """Undo one row's mark: uvdock's exactly, a hand-made one by the team's convention."""
    index = row.scope_line
    if index is None or not marks.is_marked(recipe, row, suffix):
        return None
    if not lts and LTS_ENVIRONMENT in row.environments:
        return None  # the row runs in LTS: its scope changes only with --lts
    line = recipe.lines[index]
    body = body_of(line)
    was = marks.WAS_SUFFIX.match(body) or marks.LOOSE_WAS_SUFFIX.match(body)
    parsed = flow_list(was["rest"] if was else body)
    if parsed is None:
        return None  # a block-style scope list: not something to rewrite safely
    if was is not None:
        restored_raw = was["old"]
    else:
        restored_raw = ", ".join(marks.unbroken(raw, suffix) for raw in parsed.raw_items)
        if restored_raw == ", ".join(parsed.raw_items):
            return None
    comment = broken_comment_line(recipe, row)
    replace_span(lines, index, index + 1, [parsed.with_raw(restored_raw) + ending_of(line)])
    if comment is not None:
        replace_span(lines, comment, comment + 1, [])
    line_number = index if comment is not None and comment < index else index + 1
    return Change(recipe.display, line_number, f"scope [{parsed.raw}] -> [{restored_raw}]")


def _unmark_step(
    recipe: Recipe, lines: list[str], case: str, suffix: str, lts: bool
) -> Change | None:
    entries = recipe.entries
    for at, entry in enumerate(entries):
        marker = split_marker(body_of(recipe.lines[entry.case_line]))
        if entry.cases == (case,) and marker is not None and marker[0] == "split":
            return _undo_entry_split(recipe, lines, entries, at, marker[1])
    for entry in recipe.entries_of(case):
        for at, row in enumerate(entry.rows):
            for key in ("platforms", "environment"):
                index = row.keys.get(key)
                marker = split_marker(body_of(recipe.lines[index])) if index is not None else None
                if marker is not None and marker[0] == "split":
                    return _undo_row_split(recipe, lines, entry.rows, at, key, marker[1])
    for entry in recipe.entries_of(case):
        for row in entry.rows:
            change = _unmark_row(recipe, lines, row, suffix, lts)
            if change is not None:
                return change
    return None


def plan_unmark(
    recipes: Sequence[Recipe], case: str, suffix: str = "-broken", *, lts: bool = True
) -> Plan:
    """Undo every mark of `case`; without `lts` (the opt-in) an LTS row keeps its mark."""
    edits, changes = run_steps(
        recipes,
        lambda r, lines: _unmark_step(r, lines, case, suffix, lts),
        lambda who, scope: False,
        # every run but the case's own stays as it was
        lambda c, env: c == case and (lts or env != LTS_ENVIRONMENT),
        suffix,
    )
    notes: list[str] = []
    for place in placements([parse(e.path, e.name, e.new) for e in edits], case):
        if any(s.endswith(suffix) for s in place.scopes):
            where = f"{place.path}:{place.line}: "
            if not lts and LTS_ENVIRONMENT in place.environments:
                notes.append(f"{where}an LTS row; left as is without --lts")
            else:
                notes.append(
                    f"{where}[{', '.join(place.scopes)}] is still broken (not a one-line scope"
                    " list uvdock can rewrite); left as is"
                )
    if not changes:
        notes.insert(0, f"{case} has no broken mark to undo; nothing changed")
    return Plan(edits, changes, notes)
