"""How every command shows a lock diff: a table, Markdown for a pull request, or JSON."""

from __future__ import annotations

from uvdock.lock import lockfile
from uvdock.ui.output import Output


def show_lock_diff(out: Output, diff: lockfile.LockDiff, *, title: str, fmt: str = "text") -> None:
    """In --json mode only the JSON object, on stdout."""
    counts = f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed"
    if out.json_mode:
        out.json(diff.to_json())
    elif fmt == "markdown":
        from uvdock.lock import markdown

        out.document_text(markdown.render(diff, title=title).rstrip("\n"))
    elif diff.is_empty:
        out.info(f"{title}: {counts} (the locks resolve the same packages)")
    else:
        out.info(f"{title}: {counts}")
        out.table(("", "package", "old", "new"), _rows(diff))


def _rows(diff: lockfile.LockDiff) -> list[tuple[str, str, str, str]]:
    from uvdock.lock.markdown import moved

    rows = [("added", a.name, "-", ", ".join(a.versions) or "-") for a in diff.added]
    rows += [("removed", r.name, ", ".join(r.versions) or "-", "-") for r in diff.removed]
    for c in diff.changed:  # "downgrade" when the newest version went down, as in Markdown
        down = c.before and c.after and moved(c.before, c.after).downgrade
        kind = "downgrade" if down else "changed"
        rows.append((kind, c.name, ", ".join(c.before) or "-", ", ".join(c.after) or "-"))
    return rows
