"""The reference reading of a uv.lock for the scanner's tests: a full `tomllib` parse."""

from __future__ import annotations

import tomllib

from uvdock.lock.lockfile import Entry, LockfileError, source_key
from uvdock.project.names import normalize_name


def read_packages_tomllib(data: bytes | str) -> dict[str, frozenset[Entry]]:
    """What `lockfile.read_packages` must return, through a full TOML parse."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    try:
        document = tomllib.loads(text.replace("\r\n", "\n"))
    except ValueError as exc:  # TOMLDecodeError, or an integer of thousands of digits
        raise LockfileError(f"not valid TOML: {exc}") from exc
    packages: dict[str, set[Entry]] = {}
    for table in document.get("package", []):
        entry = (str(table.get("version", "")), source_key(table.get("source")))
        packages.setdefault(normalize_name(table["name"]), set()).add(entry)
    return {name: frozenset(entries) for name, entries in packages.items()}
