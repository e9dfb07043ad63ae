"""How far the LTS pins lag behind uv.lock: per package, behind / ahead / same, and by how much.

Of a package locked several times (forked resolutions) the newest version counts. Git sources
are compared by ref (`@v0.2.0` in the LTS URL against `?rev=v0.3.0#<sha>` in the lock), and a
ref that reads as a version also as one. The command picks the lock; this module gets its text.
"""

from __future__ import annotations

from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

from uvdock.errors import EnvironmentUnusable
from uvdock.lts.requirements import Pin


class LockedPackage(NamedTuple):
    version: str | None
    git_ref: str | None  # rev / tag / branch of a git source
    git_commit: str | None


class Drift(NamedTuple):
    name: str
    lts: str  # the pinned version, or the git ref / URL of a direct reference
    lock: str | None  # None: the lock does not have the package
    status: str  # "same", "behind", "ahead", "different", "not in lock"
    level: str | None = None  # "major", "minor", "patch", "pre/post/local"
    distance: int | None = None  # e.g. 2 for "2 minor versions behind"

    @property
    def detail(self) -> str:
        if self.status in ("behind", "ahead") and self.level:
            count = f"{self.distance} " if self.distance else ""
            return f"{self.status} ({count}{self.level})"
        return self.status


def _git_source(source: str) -> tuple[str | None, str | None]:
    """(ref, commit) of a lockfile source string "git+URL?rev=REF#COMMIT"."""
    kind, _, url = source.partition("+")
    if kind != "git":
        return None, None
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    ref = next((query[k][0] for k in ("rev", "tag", "branch") if k in query), None)
    return ref, parts.fragment or None


def locked_packages(lock_text: str, origin: str) -> dict[str, LockedPackage]:
    """Normalized name -> its newest locked version."""
    from uvdock.lock import lockfile

    try:
        entries = lockfile.read_packages(lock_text)
    except lockfile.LockfileError as exc:
        raise EnvironmentUnusable(
            f"{origin}: {exc}",
            hint="a uv.lock with conflict markers is fixed with `uvdock lock resolve`",
        ) from exc
    newest: dict[str, LockedPackage] = {}
    for key, found in entries.items():
        locked = [LockedPackage(v or None, *_git_source(source)) for v, source in sorted(found)]
        newest[key] = max(locked, key=lambda p: (1, v) if (v := _as_version(p.version)) else (0, 0))
    return newest


def _as_version(text: str | None) -> Any:
    """`text` read as a version (`v0.2.0` too), or None."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text[1:] if text[:1] in ("v", "V") else text) if text else None
    except InvalidVersion:
        return None


def _by_version(name: str, lts: str, lock: str, lock_text: str | None) -> Drift:
    """Same, behind or ahead (and by how much) when both sides read as versions."""
    ours, theirs = _as_version(lts), _as_version(lock_text)
    if ours is None or theirs is None:
        return Drift(name, lts, lock, "same" if lts == lock else "different")
    if ours == theirs:
        return Drift(name, lts, lock, "same")
    older, newer = sorted((ours, theirs))
    status = "behind" if ours < theirs else "ahead"
    a, b = (*older.release, 0, 0, 0), (*newer.release, 0, 0, 0)
    for index, level in enumerate(("major", "minor", "patch")):
        if a[index] != b[index]:
            return Drift(name, lts, lock, status, level, abs(b[index] - a[index]))
    return Drift(name, lts, lock, status, "pre/post/local")


def _drift(pin: Pin, pkg: LockedPackage | None) -> Drift:
    # What the LTS file pins: the version, the git ref of a URL, or the specifier.
    lts = pin.version or pin.specifier or "*"
    if pin.url:  # `git+https://host/repo.git@v0.2.0#egg=x` -> `v0.2.0`, else the URL
        path = urlsplit(pin.url).path
        lts = pin.version or (path.rsplit("@", 1)[1] if "@" in path.rsplit("/", 1)[-1] else pin.url)
    if pkg is None:
        return Drift(pin.name, lts, None, "not in lock")
    if pkg.git_ref and pin.url:
        # A git source: compare refs (or commits), else the ref read as a version.
        lock = f"{pkg.version} ({pkg.git_ref})" if pkg.version else pkg.git_ref
        if lts in (pkg.git_ref, pkg.git_commit) or (pkg.git_commit or "").startswith(lts):
            return Drift(pin.name, lts, lock, "same")
        return _by_version(pin.name, lts, lock, pkg.git_ref)
    return _by_version(pin.name, lts, pkg.version or pkg.git_ref or "?", pkg.version)


def compare(pins: list[Pin], locked: dict[str, LockedPackage]) -> list[Drift]:
    return [_drift(pin, locked.get(pin.key)) for pin in pins]
