"""The kind of a package change in a lock diff: major, minor, patch, ..., downgrade.

Works on the described entries of lockfile.LockDiff ("1.2.3", "1.2.3 (git URL@abc123)"), so
it reads diff_locks' result as is. Versions are compared with packaging.version; a version
that is not PEP 440 (some git builds) still gets a kind: "changed". Pure: no I/O.
"""

from __future__ import annotations

from typing import NamedTuple

from packaging.version import InvalidVersion, Version

DYNAMIC = "(dynamic)"


class Described(NamedTuple):
    """One described entry split back into its version and its source ("" for a registry)."""

    version: str
    source: str

    @classmethod
    def parse(cls, text: str) -> Described:
        if text.startswith(DYNAMIC):
            rest = text[len(DYNAMIC) :].strip()
            return cls(DYNAMIC, rest[1:-1] if rest.startswith("(") else rest)
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


def _release_kind(old: Version, new: Version) -> str | None:
    # Pad so that 2.1 -> 2.1.1 is a patch, not "the third part appeared".
    width = max(len(old.release), len(new.release), 3)
    a = old.release + (0,) * (width - len(old.release))
    b = new.release + (0,) * (width - len(new.release))
    for index, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y:
            return ("major", "minor")[index] if index < 2 else "patch"
    return None


def _suffix_kind(old: Version, new: Version) -> str:
    if (old.pre, old.dev) != (new.pre, new.dev):
        return "pre-release"
    if old.post != new.post:
        return "post-release"
    if old.local != new.local:
        return "local"
    return "changed"  # equal as versions, different as text (1.0 vs 1.0.0)


def classify(before: str, after: str) -> Change:
    """The kind of moving from one described entry to another."""
    old, new = Described.parse(before), Described.parse(after)
    if old.version == new.version:
        return Change("source" if old.source != new.source else "changed", False)
    old_v, new_v = _parse(old.version), _parse(new.version)
    if old_v is None or new_v is None:
        return Change("changed", False)
    kind = _release_kind(old_v, new_v) or _suffix_kind(old_v, new_v)
    return Change(kind, new_v < old_v)


def newest(entries: tuple[str, ...]) -> str:
    """The entry with the highest version (forked locks list several); text order otherwise."""
    return max(entries, key=lambda e: (_parse(Described.parse(e).version) or Version("0"), e))
