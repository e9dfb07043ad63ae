"""Package names compared the way uv and pip do: PEP 503 normalised."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[-_.]+")


def normalize_name(name: str) -> str:
    """`Foo.Bar_baz` -> `foo-bar-baz`: runs of `-`, `_` and `.` become one `-`, lower case."""
    return _SEPARATORS.sub("-", name).lower()
