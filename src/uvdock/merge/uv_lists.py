"""How the entries of uv's own lists in `[tool.uv]` are told apart in a three-way merge.

uv reads these lists as sets, so two branches each adding an entry must give the union,
not a conflict:

- lists of package names (`no-build-isolation-package`, `no-build-package`, ...): one entry
  per PEP 503 name, so `flash_mla` and `flash-mla` are the same package;
- lists of requirement strings (`override-dependencies`, ...) are merged like dependency
  lists (entry_merge.entry_key: name plus marker) and are not listed here;
- `environments` / `required-environments`: one entry per PEP 508 marker, compared as
  packaging normalises it (quotes, spaces);
- `conflicts`: a list of sets; one entry per set of `{extra|group|package}` items, in any
  order.

A key that two sides share is one entry; different keys never conflict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from packaging.markers import InvalidMarker, Marker

from uvdock.project.names import normalize_name

NAME_LISTS = (
    "no-build-isolation-package",
    "no-build-package",
    "no-binary-package",
    "reinstall-package",
    "upgrade-package",
)
MARKER_LISTS = ("environments", "required-environments")


def name_key(value: Any) -> str:
    return normalize_name(value.strip()) if isinstance(value, str) else f"value:{value!r}"


def marker_key(value: Any) -> str:
    if not isinstance(value, str):
        return f"value:{value!r}"
    try:
        return str(Marker(value))
    except InvalidMarker:
        return value.strip()


def _conflict_item(item: Any) -> str:
    if not isinstance(item, dict):
        return repr(item)
    parts = []
    for field in sorted(item):
        value = item[field]
        shown = normalize_name(value) if isinstance(value, str) else repr(value)
        parts.append(f"{field}={shown}")
    return "{" + ", ".join(parts) + "}"


def conflict_set_key(value: Any) -> str:
    """`[{extra = "a"}, {extra = "b"}]` and `[{extra = "b"}, {extra = "a"}]` are one set."""
    if not isinstance(value, list):
        return f"value:{value!r}"
    return "[" + ", ".join(sorted(_conflict_item(item) for item in value)) + "]"


def key_function(path: tuple[str, ...]) -> Callable[[Any], str] | None:
    """The entry identity of one of uv's set-like lists at `path`, None for any other path."""
    if len(path) != 3 or path[:2] != ("tool", "uv"):
        return None
    if path[2] in NAME_LISTS:
        return name_key
    if path[2] in MARKER_LISTS:
        return marker_key
    if path[2] == "conflicts":
        return conflict_set_key
    return None
