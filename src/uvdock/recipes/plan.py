"""A recipe edit as a plan (mark and unmark): steps over a recipe's lines, the changes they
made, the report. Each step re-parses the file and acts on the first thing left to do: the
files are small and this keeps every line index honest after an insertion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from uvdock.files.edit import FileEdit
from uvdock.files.textlines import ending_of
from uvdock.recipes.parse import Recipe, body_of, parse

_MAX_STEPS = 10_000  # a guard: every step removes one thing left to do


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
            lines.append(
                f"{done} {count} file(s)" + (" (dry run: nothing written)" if dry_run else "")
            )
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
    recipes: Sequence[Recipe], act: Step, verify: Callable[[FileEdit], None]
) -> tuple[list[FileEdit], list[Change]]:
    """Each recipe's edit, step after step until `act` has nothing left to do, verified."""
    edits: list[FileEdit] = []
    changes: list[Change] = []
    for recipe in recipes:
        lines = list(recipe.lines)
        current = recipe
        for _ in range(_MAX_STEPS):
            change = act(current, lines)
            if change is None:
                break
            changes.append(change)
            current = parse(recipe.path, recipe.display, "".join(lines))
        edits.append(FileEdit(recipe.path, recipe.text, "".join(lines), recipe.display))
        verify(edits[-1])
    return edits, changes
