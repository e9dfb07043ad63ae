"""A package pinned to different versions in two dependency lists, after a merge.

Each side may pin a package consistently (`torch==2.6.0` in `project.dependencies` and in
`tool.uv.override-dependencies`); a merge that takes one side's change of one list and the
other side's of another can leave two different pins, which uv then fails to resolve or
(through an override) silently overrules. Such a pair is reported when neither side had it
on its own. Pure data: plain TOML values in, the clashes out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from uvdock.project.names import normalize_name


@dataclass(frozen=True)
class PinClash:
    package: str  # the name, with its marker when it has one
    pins: tuple[tuple[str, str], ...]  # (dotted list, the requirement as written)

    def line(self) -> str:
        where = ", ".join(f"{path} ({req})" for path, req in self.pins)
        return f"{self.package} pinned differently: {where}"


def _lists(data: Any, pattern: tuple[str, ...], path: tuple[str, ...] = ()) -> Iterator[Any]:
    """(dotted path, list) for every list at `pattern` (`*`: any key) in `data`."""
    if not pattern:
        if isinstance(data, list):
            yield ".".join(path), data
        return
    if not isinstance(data, dict):
        return
    keys = list(data) if pattern[0] == "*" else [pattern[0]]
    for key in keys:
        if key in data:
            yield from _lists(data[key], pattern[1:], (*path, key))


@lru_cache(maxsize=4096)
def _requirement(entry: str) -> Requirement | None:
    """Parsed once: the three sides share most of their entries."""
    try:
        return Requirement(entry)
    except InvalidRequirement:
        return None


def _pins(data: Any, patterns: tuple[tuple[str, ...], ...]) -> dict[str, dict[str, str]]:
    """package (+ marker) -> {list: requirement} for every `==` pin."""
    found: dict[str, dict[str, str]] = {}
    for pattern in patterns:
        for path, entries in _lists(data, pattern):
            for entry in entries:
                req = _requirement(entry) if isinstance(entry, str) else None
                if req is None or not any(s.operator in ("==", "===") for s in req.specifier):
                    continue
                marker = f"; {req.marker}" if req.marker is not None else ""
                found.setdefault(f"{normalize_name(req.name)}{marker}", {})[path] = entry
    return found


def _specifier(entry: str) -> str:
    req = _requirement(entry)
    return str(req.specifier) if req is not None else entry


def _clashing(pins: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The packages whose pins differ (in their specifiers, as packaging normalises them)."""
    return {
        package: by
        for package, by in pins.items()
        if len({str(_specifier(req)) for req in by.values()}) > 1
    }


def new_clashes(
    merged: Any, ours: Any, theirs: Any, patterns: tuple[tuple[str, ...], ...]
) -> tuple[PinClash, ...]:
    """The pins that differ in `merged` and differed on neither side alone."""
    before = set(_clashing(_pins(ours, patterns))) | set(_clashing(_pins(theirs, patterns)))
    return tuple(
        PinClash(package, tuple(by.items()))
        for package, by in _clashing(_pins(merged, patterns)).items()
        if package not in before
    )
