"""What only the branch changed in uv.lock, so `lock resolve` does not drop it silently.

Relocking on the merged-in side's lock keeps every version that side locked; a version
only the branch moved (`uv lock --upgrade-package gamma==1.0.0`, never written in
pyproject.toml) is then lost, because uv prefers the lock it is given. Comparing the
three locks git recorded (stage 1 the base, the branch's stage, the ref's lock) per
package finds those versions; the command re-applies them with
`--upgrade-package NAME==VERSION` and says which it kept and which it could not.

A change the branch's own requirements explain (a requirement naming the package changed
between the base's and the branch's lock metadata) is the relock's to decide: the merged
pyproject.toml says what it wants. Only single-version packages from an index or a
find-links folder can be pinned by `==`; git, path and local-project sources are left to
the relock. Pure: the command reads the locks and runs uv.
"""

from __future__ import annotations

from typing import NamedTuple

from uvdock.lock import lockfile


class Pin(NamedTuple):
    name: str
    version: str  # what the branch locked
    before: str  # what the base (and the ref) locked, "" when the branch added it

    def spec(self) -> str:
        return f"{self.name}=={self.version}"

    def said(self) -> str:
        if self.before:
            return f"{self.name} {self.version}, which only this branch pinned (the base has {self.before})"
        return f"{self.name} {self.version}, which only this branch locked"


def _single_index_version(entries: frozenset[lockfile.Entry] | None) -> str | None:
    if entries is None or len(entries) != 1:
        return None
    ((version, source),) = entries
    kind = source.partition("+")[0]
    return version if version and kind == "registry" else None


def branch_only(base: bytes, branch: bytes, ref: bytes) -> list[Pin]:
    """Versions the branch changed in its lock that the ref left as the base had them and
    the branch's declared requirements do not explain. Raises LockfileError on bad input."""
    base_pkgs = lockfile.read_packages(base)
    branch_pkgs = lockfile.read_packages(branch)
    ref_pkgs = lockfile.read_packages(ref)
    base_reqs = lockfile.declared_requirements(base)
    branch_reqs = lockfile.declared_requirements(branch)
    pins: list[Pin] = []
    for name in sorted(branch_pkgs):
        mine, before = branch_pkgs[name], base_pkgs.get(name)
        if mine == before or ref_pkgs.get(name) != before:
            continue  # unchanged by the branch, or the ref changed it too
        if base_reqs.get(name) != branch_reqs.get(name):
            continue  # the branch's requirements changed: the merged pyproject.toml decides
        version = _single_index_version(mine)
        if version is None:
            continue
        was = sorted(v for v, _ in before) if before else []
        pins.append(Pin(name, version, ", ".join(was)))
    return pins


def lost(pins: list[Pin], relocked: bytes) -> list[Pin]:
    """The pins the relock moved away from (a package it dropped is not pinned back)."""
    packages = lockfile.read_packages(relocked)
    return [
        p
        for p in pins
        if p.name in packages and _single_index_version(packages[p.name]) != p.version
    ]
