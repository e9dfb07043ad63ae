"""Show a LockDiff: a table for people, the JSON object in --json mode."""

from __future__ import annotations

from uvdock.lock.lockfile import LockDiff
from uvdock.output import Output


def _join(versions: tuple[str, ...]) -> str:
    return ", ".join(versions) if versions else "-"


def summary(diff: LockDiff) -> str:
    return f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed"


def show_lock_diff(out: Output, diff: LockDiff, *, title: str | None = None) -> None:
    """Render the diff. In --json mode print only the JSON object on stdout."""
    if out.json_mode:
        out.json(diff.to_json())
        return
    heading = f"{title}: {summary(diff)}" if title else summary(diff)
    if diff.is_empty:
        out.info(f"{heading} (the locks resolve the same packages)")
        return
    out.info(heading)
    rows: list[tuple[str, str, str, str]] = []
    rows += [("added", a.name, "-", _join(a.versions)) for a in diff.added]
    rows += [("removed", r.name, _join(r.versions), "-") for r in diff.removed]
    rows += [("changed", c.name, _join(c.before), _join(c.after)) for c in diff.changed]
    out.table(("", "package", "old", "new"), rows)
