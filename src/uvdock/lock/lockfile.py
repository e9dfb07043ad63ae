"""uv.lock reading, conflict markers, and the package diff of two locks. Pure: no I/O.

Only the `[[package]]` tables' name, version and source are needed, so a purpose-built
scanner reads them instead of a full TOML parser: uv writes these three keys as
single-line `key = value` pairs at the start of each package table, which a few regular
expressions find several times faster than `tomllib` parses the whole 1-1.6 MB file.
Any value the fast patterns do not recognise (escapes, unusual quoting) is handed to
`tomllib` for that one line, so the result always equals what `tomllib` would read
(tests/test_lockfile.py checks this on the real Megatron-LM lock).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from uvdock.project.names import normalize_name

# A source as one comparable string: "registry+URL", "git+URL", "editable+.", ...
Source = str
# One resolved occurrence of a package: (version, source). Forked locks list a name
# several times, so each name maps to a set of these.
Entry = tuple[str, Source]

_MARKER_RE = re.compile(r"^(?:<{7}(?: |$)|>{7}(?: |$)|={7}$|\|{7}(?: |$))", re.MULTILINE)
_MARKER_RUNS = ("<" * 7, "=" * 7, ">" * 7, "|" * 7)
_PACKAGE_HEADER = "\n[[package]]\n"
_KEY_RE = re.compile(r"^(name|version|source) = (.*)$", re.MULTILINE)
_SIMPLE_STRING_RE = re.compile(r'"([^"\\]*)"')
_SIMPLE_INLINE_RE = re.compile(r'\{ ([a-z-]+) = "([^"\\]*)" \}')


class LockfileError(ValueError):
    """The text is not a uv.lock this module can read."""


def _as_text(data: bytes | str) -> str:
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    return text.replace("\r\n", "\n") if "\r" in text else text


def has_conflict_markers(text: bytes | str) -> bool:
    """True when a line starts with a git conflict marker (<<<<<<<, =======, >>>>>>>, |||||||)."""
    body = _as_text(text)
    # A plain substring search first: the line-anchored regex is ~10x slower on 1 MB locks.
    if not any(marker in body for marker in _MARKER_RUNS):
        return False
    return _MARKER_RE.search(body) is not None


def conflict_marker_lines(text: bytes | str) -> list[int]:
    """1-based line numbers of the conflict markers."""
    body = _as_text(text)
    return [body.count("\n", 0, m.start()) + 1 for m in _MARKER_RE.finditer(body)]


def source_key(source: Any) -> Source:
    """A source table as one string, e.g. {"git": "U"} -> "git+U"; sorted keys when several."""
    if not isinstance(source, dict) or not source:
        return ""
    return ",".join(f"{key}+{source[key]}" for key in sorted(source))


def _toml_value(line: str) -> Any:
    import tomllib

    try:
        return tomllib.loads(line)[line.split(" = ", 1)[0]]
    except (ValueError, KeyError) as exc:  # ValueError: TOMLDecodeError, a huge integer
        raise LockfileError(f"cannot read line {line!r}: {exc}") from exc


def _string_value(line: str, raw: str) -> str:
    match = _SIMPLE_STRING_RE.fullmatch(raw)
    if match:
        return match.group(1)
    value = _toml_value(line)
    if not isinstance(value, str):
        raise LockfileError(f"expected a string in line {line!r}")
    return value


def _source_value(line: str, raw: str) -> Source:
    match = _SIMPLE_INLINE_RE.fullmatch(raw)
    if match:
        return f"{match.group(1)}+{match.group(2)}"
    return source_key(_toml_value(line))


def _check_is_lock(text: str) -> None:
    head = text.lstrip()[:200]
    if head and not head.startswith("version = "):  # empty text: a lock with no packages
        raise LockfileError("not a uv.lock (it does not start with `version = N`)")


def read_packages(data: bytes | str) -> dict[str, frozenset[Entry]]:
    """Normalised name -> the set of (version, source) it resolves to in this lock.

    A package without a version (a dynamic-version local project) has version "".
    """
    text = _as_text(data)
    _check_is_lock(text)
    if has_conflict_markers(text):
        raise LockfileError("it holds git conflict markers")
    packages: dict[str, set[Entry]] = {}
    chunks = text.split(_PACKAGE_HEADER)
    for chunk in chunks[1:]:
        # The package's own keys come before its first sub-table ([package.metadata], ...).
        end = chunk.find("\n[")
        own = chunk if end < 0 else chunk[:end]
        name = version = source = None
        for match in _KEY_RE.finditer(own):
            key, raw = match.group(1), match.group(2)
            if key == "name" and name is None:
                name = _string_value(match.group(0), raw)
            elif key == "version" and version is None:
                version = _string_value(match.group(0), raw)
            elif key == "source" and source is None:
                source = _source_value(match.group(0), raw)
        if name is None:
            raise LockfileError("a [[package]] table has no name")
        packages.setdefault(normalize_name(name), set()).add((version or "", source or ""))
    return {name: frozenset(entries) for name, entries in packages.items()}


def read_packages_tomllib(data: bytes | str) -> dict[str, frozenset[Entry]]:
    """The same as `read_packages`, through a full TOML parse (the reference for tests)."""
    import tomllib

    try:
        document = tomllib.loads(_as_text(data))
    except ValueError as exc:  # TOMLDecodeError, or an integer of thousands of digits
        raise LockfileError(f"not valid TOML: {exc}") from exc
    packages: dict[str, set[Entry]] = {}
    for table in document.get("package", []):
        entry = (str(table.get("version", "")), source_key(table.get("source")))
        packages.setdefault(normalize_name(table["name"]), set()).add(entry)
    return {name: frozenset(entries) for name, entries in packages.items()}


_LOCAL_SOURCES = ("virtual", "editable", "directory")
_LOCAL_SOURCE_RE = re.compile(r"^source = \{ (?:virtual|editable|directory) = ", re.MULTILINE)
_MANIFEST_LISTS = ("requirements", "constraints", "overrides")


def declared_requirements(data: bytes | str) -> dict[str, frozenset[str]]:
    """Normalised name -> every requirement on it the lock records as declared: the
    local projects' `requires-dist` and `requires-dev`, and the manifest's requirements,
    constraints and overrides, each as one comparable string. These tables are nested, so
    tomllib reads them, but only them: the text before the first package (the manifest) and
    the few local projects' tables, not the whole 1 MB lock."""
    import tomllib

    text = _as_text(data)
    head, *chunks = text.split(_PACKAGE_HEADER)
    local = [c for c in chunks if _LOCAL_SOURCE_RE.search(c.split("\n[", 1)[0])]
    try:
        document = tomllib.loads(head + "".join(_PACKAGE_HEADER + c for c in local))
    except tomllib.TOMLDecodeError as exc:
        raise LockfileError(f"not valid TOML: {exc}") from exc
    found: list[tuple[str, Any]] = []
    for table in document.get("package", []):
        source = table.get("source") or {}
        if not any(kind in source for kind in _LOCAL_SOURCES):
            continue
        metadata = table.get("metadata") or {}
        found += [(table["name"], r) for r in metadata.get("requires-dist", [])]
        for group, listed in (metadata.get("requires-dev") or {}).items():
            found += [(f"{table['name']}:{group}", r) for r in listed]
    manifest = document.get("manifest") or {}
    for key in _MANIFEST_LISTS:
        found += [(f"manifest:{key}", r) for r in manifest.get(key, [])]
    declared: dict[str, set[str]] = {}
    for where, requirement in found:
        if isinstance(requirement, dict) and isinstance(requirement.get("name"), str):
            shown = ",".join(f"{k}={requirement[k]!r}" for k in sorted(requirement))
            declared.setdefault(normalize_name(requirement["name"]), set()).add(f"{where}:{shown}")
    return {name: frozenset(specs) for name, specs in declared.items()}


def describe_entry(entry: Entry, *, with_registry: bool = False) -> str:
    """A (version, source) pair for people: the version, plus the source unless a registry."""
    version, source = entry
    shown = version or "(dynamic)"
    kind, _, where = source.partition("+")
    if not source or (kind == "registry" and not with_registry):
        return shown
    if kind == "git":
        url, _, commit = where.partition("#")
        url = url.split("?", 1)[0]
        return f"{shown} (git {url}@{commit[:12]})" if commit else f"{shown} (git {url})"
    return f"{shown} ({kind} {where})"


def describe_entries(entries: Iterable[Entry], *, with_registry: bool = False) -> list[str]:
    return sorted(describe_entry(e, with_registry=with_registry) for e in entries)


@dataclass(frozen=True)
class Added:
    name: str
    versions: tuple[str, ...]  # for people: the version, and the source unless a registry
    entries: tuple[Entry, ...] = ()  # (version, source), apart: what --json gives


@dataclass(frozen=True)
class Changed:
    name: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    before_entries: tuple[Entry, ...] = ()
    after_entries: tuple[Entry, ...] = ()


def _versions_json(entries: tuple[Entry, ...]) -> list[str]:
    return sorted({version for version, _ in entries if version})


def _entries_json(entries: tuple[Entry, ...]) -> list[dict[str, str | None]]:
    return [{"version": version or None, "source": source or None} for version, source in entries]


@dataclass(frozen=True)
class LockDiff:
    """Names only in HEAD (added), only in BASE (removed), in both with other entries (changed)."""

    added: list[Added] = field(default_factory=list)
    removed: list[Added] = field(default_factory=list)
    changed: list[Changed] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        def one(a: Added) -> dict[str, Any]:
            return {
                "name": a.name,
                "versions": _versions_json(a.entries),
                "entries": _entries_json(a.entries),
            }

        return {
            "added": [one(a) for a in self.added],
            "removed": [one(r) for r in self.removed],
            "changed": [
                {
                    "name": c.name,
                    "from": _versions_json(c.before_entries),
                    "to": _versions_json(c.after_entries),
                    "from_entries": _entries_json(c.before_entries),
                    "to_entries": _entries_json(c.after_entries),
                }
                for c in self.changed
            ],
        }


def _added(name: str, entries: frozenset[Entry]) -> Added:
    return Added(name, tuple(describe_entries(entries)), tuple(sorted(entries)))


def diff_packages(base: dict[str, frozenset[Entry]], head: dict[str, frozenset[Entry]]) -> LockDiff:
    added = [_added(n, head[n]) for n in sorted(head.keys() - base.keys())]
    removed = [_added(n, base[n]) for n in sorted(base.keys() - head.keys())]
    changed: list[Changed] = []
    for name in sorted(base.keys() & head.keys()):
        old, new = base[name], head[name]
        if old == new:
            continue
        before, after = describe_entries(old), describe_entries(new)
        if before == after:  # only the registry differs: show it
            before = describe_entries(old, with_registry=True)
            after = describe_entries(new, with_registry=True)
        changed.append(
            Changed(name, tuple(before), tuple(after), tuple(sorted(old)), tuple(sorted(new)))
        )
    return LockDiff(added, removed, changed)


def diff_locks(base: bytes | str, head: bytes | str) -> LockDiff:
    """The package diff of two uv.lock texts. Raises LockfileError on unreadable input."""
    return diff_packages(read_packages(base), read_packages(head))
