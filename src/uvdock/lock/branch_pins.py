"""What only the branch changed in uv.lock, so `lock resolve` does not drop it silently.

Relocking on the merged-in side's lock loses a version only the branch moved (`uv lock
--upgrade-package gamma==1.0.0`): uv prefers the lock it is given. The three locks compared
per package find those versions, to be asked for again with `--upgrade-package NAME==VERSION`;
a change the branch's declared requirements explain is the merged pyproject.toml's to decide.
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
        did = f"pinned (the base has {self.before})" if self.before else "locked"
        return f"{self.name} {self.version}, which only this branch {did}"


class Kept(NamedTuple):  # the pins asked for again: kept, or not (they do not resolve)
    kept: list[Pin]
    not_kept: list[Pin]

    def lines(self) -> list[str]:
        return [f"kept: {p.said()}" for p in self.kept] + [
            f"could not keep: {p.said()}, because {_unresolvable(p)}" for p in self.not_kept
        ]

    def to_json(self) -> dict[str, list[dict[str, str]]]:
        return {
            "kept": [{"name": p.name, "version": p.version} for p in self.kept],
            "not_kept": [
                {"name": p.name, "version": p.version, "reason": _unresolvable(p)}
                for p in self.not_kept
            ],
        }


def _unresolvable(pin: Pin) -> str:
    return (
        f"`uv lock --upgrade-package {pin.spec()}` does not resolve with the merged "
        "requirements (uv's words are above)"
    )


def _single_index_version(entries: frozenset[lockfile.Entry] | None) -> str | None:
    if entries is None or len(entries) != 1:
        return None
    ((version, source),) = entries
    return version if version and source.partition("+")[0] == "registry" else None


def branch_only(base: bytes, branch: bytes, ref: bytes) -> list[Pin]:
    """Versions the branch changed that the ref left as the base had them and the branch's
    declared requirements do not explain. Raises LockfileError on bad input."""
    base_pkgs, branch_pkgs, ref_pkgs = map(lockfile.read_packages, (base, branch, ref))
    base_reqs, branch_reqs = map(lockfile.declared_requirements, (base, branch))
    pins: list[Pin] = []
    for name in sorted(branch_pkgs):
        mine, before = branch_pkgs[name], base_pkgs.get(name)
        if mine == before or ref_pkgs.get(name) != before:
            continue  # unchanged by the branch, or the ref changed it too
        if base_reqs.get(name) != branch_reqs.get(name):
            continue  # the branch's requirements changed: the merged pyproject.toml decides
        if (version := _single_index_version(mine)) is not None:
            pins.append(Pin(name, version, ", ".join(sorted(v for v, _ in before or ()))))
    return pins


def lost(pins: list[Pin], relocked: bytes) -> list[Pin]:
    """The pins the relock moved away from (a package it dropped is not pinned back)."""
    packages = lockfile.read_packages(relocked)
    return [
        p
        for p in pins
        if p.name in packages and _single_index_version(packages[p.name]) != p.version
    ]
