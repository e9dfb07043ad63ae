"""A lock diff as a Markdown table for a pull request, like Renovate's and Dependabot's.

One row per package: the package, the kind of change (major / minor / patch / ...,
added, removed, a flagged downgrade), from, to, and the source where it matters (a git
revision, a registry that changed). Takes lockfile.diff_locks' result. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection

from uvdock.lock.change_kind import Described, classify, newest
from uvdock.lock.lockfile import LockDiff
from uvdock.project.names import normalize_name
from uvdock.ui.markdown_text import code_span

HEADER = ("Package", "Change", "From", "To", "Source")
DOWNGRADE_FLAG = ":warning: **downgrade**"
PROTECTED_MARK = " (base image)"  # after the name of a package the image provides


def _cell(text: str) -> str:
    # A pipe ends a cell and a newline ends the row: both would break the table.
    return text.replace("|", "\\|").replace("\n", " ")


def _versions(entries: tuple[str, ...]) -> str:
    return "<br>".join(code_span(Described.parse(e).version) for e in entries) or "-"


def _source_text(source: str) -> str:
    """`git URL@abc123` -> git `URL` `abc123`; a registry that changed keeps its URL."""
    kind, _, where = source.partition(" ")
    if kind == "git" and "@" in where:
        url, _, commit = where.rpartition("@")
        return f"git {code_span(url)} {code_span(commit)}"
    return f"{kind} {code_span(where)}" if where else kind


def _sources(entries: tuple[str, ...]) -> list[str]:
    return sorted({Described.parse(e).source for e in entries})


def _source_cell(before: tuple[str, ...], after: tuple[str, ...]) -> str:
    old, new = _sources(before), _sources(after)
    if old == new or not before or not after:
        shown = [s for s in (new or old) if s]
        return "<br>".join(_source_text(s) for s in shown) or "registry"
    if len(old) == len(new) == 1 and old[0].startswith("git ") and new[0].startswith("git "):
        (old_url, _, old_rev), (new_url, _, new_rev) = (
            old[0].rpartition("@"),
            new[0].rpartition("@"),
        )
        if old_url == new_url:  # the usual case: the same repository at another revision
            return f"{_source_text(new[0]).rpartition(' ')[0]} {code_span(old_rev)} → {code_span(new_rev)}"
    old_text = "<br>".join(_source_text(s) for s in old if s) or "registry"
    new_text = "<br>".join(_source_text(s) for s in new if s) or "registry"
    return f"{old_text} → {new_text}"


def _change_cell(before: tuple[str, ...], after: tuple[str, ...]) -> str:
    change = classify(newest(before), newest(after))
    kind = f"**{change.kind}**" if change.kind == "major" and not change.downgrade else change.kind
    return f"{DOWNGRADE_FLAG} ({change.kind})" if change.downgrade else kind


def rows(diff: LockDiff, protected: Collection[str] = ()) -> list[tuple[str, str, str, str, str]]:
    """The table's rows: changed packages first, then added, then removed; by name in each.
    A package in `protected` (the base image provides it) is marked after its name."""
    marked = {normalize_name(name) for name in protected}

    def name_cell(name: str) -> str:
        return code_span(name) + (PROTECTED_MARK if normalize_name(name) in marked else "")

    table: list[tuple[str, str, str, str, str]] = []
    for c in diff.changed:
        table.append(
            (
                name_cell(c.name),
                _change_cell(c.before, c.after),
                _versions(c.before),
                _versions(c.after),
                _source_cell(c.before, c.after),
            )
        )
    for a in diff.added:
        table.append(
            (name_cell(a.name), "added", "-", _versions(a.versions), _source_cell((), a.versions))
        )
    for r in diff.removed:
        table.append(
            (name_cell(r.name), "removed", _versions(r.versions), "-", _source_cell(r.versions, ()))
        )
    return table


def summary(diff: LockDiff) -> str:
    downgrades = sum(
        1 for c in diff.changed if classify(newest(c.before), newest(c.after)).downgrade
    )
    text = f"{len(diff.changed)} changed, {len(diff.added)} added, {len(diff.removed)} removed"
    return text + (f", {downgrades} downgraded" if downgrades else "")


def render(diff: LockDiff, *, title: str = "uv.lock", protected: Collection[str] = ()) -> str:
    """The whole Markdown block, ending with a newline."""
    heading = f"**{_cell(title)}**: "
    if diff.is_empty:
        return heading + "no package changes (the locks resolve the same packages)\n"
    lines = [heading + summary(diff), "", "| " + " | ".join(HEADER) + " |"]
    lines.append("|" + "|".join("---" for _ in HEADER) + "|")
    table = rows(diff, protected)
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in table]
    return "\n".join(lines) + "\n"
