"""Show a LockDiff: a table for people, the JSON object in --json mode."""

from __future__ import annotations

import argparse

from uvdock.commands.base import add_format_option
from uvdock.lock.lockfile import Changed, LockDiff
from uvdock.ui.output import Output


def _join(versions: tuple[str, ...]) -> str:
    return ", ".join(versions) if versions else "-"


def summary(diff: LockDiff) -> str:
    return f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed"


MARKDOWN_HELP = "markdown: a table for the pull request (package, change kind, from, to, source)"


def show_lock_diff(
    out: Output, diff: LockDiff, *, title: str | None = None, fmt: str = "text"
) -> None:
    """Render the diff. In --json mode print only the JSON object on stdout."""
    if out.json_mode:
        out.json(diff.to_json())
        return
    if fmt == "markdown":
        from uvdock.lock import markdown

        out.document_text(markdown.render(diff, title=title or "uv.lock").rstrip("\n"))
        return
    heading = f"{title}: {summary(diff)}" if title else summary(diff)
    if diff.is_empty:
        out.info(f"{heading} (the locks resolve the same packages)")
        return
    out.info(heading)
    rows: list[tuple[str, str, str, str]] = []
    rows += [("added", a.name, "-", _join(a.versions)) for a in diff.added]
    rows += [("removed", r.name, _join(r.versions), "-") for r in diff.removed]
    rows += [(_kind(c), c.name, _join(c.before), _join(c.after)) for c in diff.changed]
    out.table(("", "package", "old", "new"), rows)


def _kind(change: Changed) -> str:
    """ "downgrade" when the newest version went down (as the markdown table says), else
    "changed"."""
    from uvdock.lock.change_kind import classify, newest

    if not change.before or not change.after:
        return "changed"
    moved = classify(newest(change.before), newest(change.after))
    return "downgrade" if moved.downgrade else "changed"


def add_lock_format_option(parser: argparse.ArgumentParser) -> None:
    """`--format text|markdown` for the commands that show a lock diff."""
    add_format_option(parser, "markdown", help=MARKDOWN_HELP)
