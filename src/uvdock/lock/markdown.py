"""A lock diff as a Markdown table for a pull request, like Renovate's and Dependabot's.

Kinds are read from lockfile.LockDiff's described entries ("1.2.3 (git URL@abc123)") with
packaging.version; a version that is not PEP 440 (some git builds) is "changed". Pure.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

from uvdock.lock.lockfile import LockDiff
from uvdock.project.names import normalize_name
from uvdock.ui.markdown_text import code_span

HEADER = ("Package", "Change", "From", "To", "Source")
DOWNGRADE_FLAG = ":warning: **downgrade**"
PROTECTED_MARK = " (base image)"  # after the name of a package the image provides


class Described(NamedTuple):
    """One described entry split back into its version and its source ("" for a registry)."""

    version: str
    source: str

    @classmethod
    def parse(cls, text: str) -> Described:  # "(dynamic)" holds no " (": it parses alike
        version, sep, source = text.partition(" (")
        return cls(version, source[:-1] if sep and source.endswith(")") else source)


class Change(NamedTuple):
    kind: str  # major, minor, patch, pre-release, post-release, local, source, changed
    downgrade: bool


def _parse(version: str) -> Version | None:
    try:
        return Version(version)
    except InvalidVersion:
        return None


def _kind(old: Version, new: Version) -> str:
    # Padded so that 2.1 -> 2.1.1 is a patch, not "the third part appeared".
    width = max(len(old.release), len(new.release), 3)
    a, b = (v.release + (0,) * (width - len(v.release)) for v in (old, new))
    moved = next((index for index, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), None)
    if moved is not None:
        return ("major", "minor")[moved] if moved < 2 else "patch"
    if (old.pre, old.dev) != (new.pre, new.dev):
        return "pre-release"
    if old.post != new.post:
        return "post-release"
    return "local" if old.local != new.local else "changed"  # 1.0 vs 1.0.0: equal versions


def classify(before: str, after: str) -> Change:
    old, new = Described.parse(before), Described.parse(after)
    if old.version == new.version:
        return Change("source" if old.source != new.source else "changed", False)
    old_v, new_v = _parse(old.version), _parse(new.version)
    if old_v is None or new_v is None:
        return Change("changed", False)
    return Change(_kind(old_v, new_v), new_v < old_v)


def newest(entries: tuple[str, ...]) -> str:
    """The entry with the highest version (forked locks list several); text order otherwise."""
    return max(entries, key=lambda e: (_parse(Described.parse(e).version) or Version("0"), e))


def moved(before: tuple[str, ...], after: tuple[str, ...]) -> Change:
    return classify(newest(before), newest(after))


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


def _sources(sources: list[str]) -> str:
    return "<br>".join(_source_text(s) for s in sources if s) or "registry"


def _source_cell(before: tuple[str, ...], after: tuple[str, ...]) -> str:
    old, new = (sorted({Described.parse(e).source for e in side}) for side in (before, after))
    if old == new or not before or not after:
        return _sources(new or old)
    if len(old) == len(new) == 1 and old[0].startswith("git ") and new[0].startswith("git "):
        (old_url, _, old_rev), (new_url, _, new_rev) = (s[0].rpartition("@") for s in (old, new))
        if old_url == new_url:  # the usual case: the same repository at another revision
            repository = _source_text(new[0]).rpartition(" ")[0]
            return f"{repository} {code_span(old_rev)} → {code_span(new_rev)}"
    return f"{_sources(old)} → {_sources(new)}"


def _change_cell(before: tuple[str, ...], after: tuple[str, ...]) -> str:
    if (change := moved(before, after)).downgrade:
        return f"{DOWNGRADE_FLAG} ({change.kind})"
    return f"**{change.kind}**" if change.kind == "major" else change.kind


def rows(diff: LockDiff, protected: Collection[str] = ()) -> list[tuple[str, str, str, str, str]]:
    """The table's rows: changed packages first, then added, then removed; by name in each.
    A package in `protected` (the base image provides it) is marked after its name."""
    marked = {normalize_name(name) for name in protected}

    def name_cell(name: str) -> str:
        return code_span(name) + (PROTECTED_MARK if normalize_name(name) in marked else "")

    table = [(c.name, _change_cell(c.before, c.after), c.before, c.after) for c in diff.changed]
    table += [(a.name, "added", (), a.versions) for a in diff.added]
    table += [(r.name, "removed", r.versions, ()) for r in diff.removed]
    return [
        (name_cell(name), kind, _versions(old), _versions(new), _source_cell(old, new))
        for name, kind, old, new in table
    ]


def summary(diff: LockDiff) -> str:
    downgrades = sum(moved(c.before, c.after).downgrade for c in diff.changed)
    text = f"{len(diff.changed)} changed, {len(diff.added)} added, {len(diff.removed)} removed"
    return text + (f", {downgrades} downgraded" if downgrades else "")


def render(diff: LockDiff, *, title: str = "uv.lock", protected: Collection[str] = ()) -> str:
    heading = f"**{_cell(title)}**: "
    if diff.is_empty:
        return heading + "no package changes (the locks resolve the same packages)\n"
    lines = [heading + summary(diff), "", "| " + " | ".join(HEADER) + " |"]
    lines.append("|" + "|".join("---" for _ in HEADER) + "|")
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in rows(diff, protected)]
    return "\n".join(lines) + "\n"
