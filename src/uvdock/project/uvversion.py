"""Which uv runs, and whether it matches the project and the host: a different uv can
rewrite uv.lock for nothing. Pure: the callers run `uv --version` and pass its text."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

# `uv 0.4.30`, `uv 0.5.0 (1a6d5e2b8 2024-11-07)`, `uv 0.4.18 (Homebrew 2024-10-02)`.
_VERSION = re.compile(r"\buv (\d+\.\d+(?:\.\d+)*\S*)")


def parse(output: str) -> str | None:
    return match[1] if (match := _VERSION.search(output)) else None


def required_specifier(required: str) -> SpecifierSet | None:
    """`[tool.uv] required-version` as uv reads it (a bare version means `==`); None: invalid."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(required)
    except InvalidSpecifier:
        try:
            return SpecifierSet(f"=={Version(required)}")
        except InvalidVersion:
            return None


def satisfies(version: str, required: str) -> bool:
    """Whether uv `version` meets `required`; False when either does not parse."""
    from packaging.version import InvalidVersion, Version

    spec = required_specifier(required)
    try:
        return spec is not None and spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def mismatches(container: str, required: str | None, host: str | None) -> list[str]:
    problems: list[str] = []
    if required:
        if required_specifier(required) is None:
            problems.append(f"[tool.uv] required-version {required!r} is not a valid specifier")
        elif not satisfies(container, required):
            problems.append(
                f"the container's uv {container} does not satisfy [tool.uv] required-version "
                f"{required}"
            )
    if host and host != container:
        problems.append(
            f"the host's uv is {host}, the container's is {container}: uvdock uses the container's "
            "(a different uv can rewrite uv.lock for nothing)"
        )
    return problems
