"""What the target repository's pyproject.toml and Dockerfile say about dependencies.

Read-only. Names are compared PEP 503-normalized, the way uv does.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from uvdock.errors import InputRefused
from uvdock.project.names import normalize_name

_NO_INSTALL = re.compile(r"--no-install-package[= ]+([A-Za-z0-9][A-Za-z0-9._-]*)")


class ProjectDeps(NamedTuple):
    extras: tuple[str, ...]
    groups: tuple[str, ...]
    default_groups: tuple[str, ...]

    def classify(self, name: str) -> str:
        """'extra' or 'group' for a name, by what the project really declares."""
        wanted = normalize_name(name)
        if wanted in {normalize_name(e) for e in self.extras}:
            return "extra"
        if wanted in {normalize_name(g) for g in self.groups}:
            return "group"
        raise InputRefused(
            f"`{name}` is neither an extra nor a dependency group of this project",
            hint=f"extras: {', '.join(self.extras) or '(none)'}; groups: {', '.join(self.groups) or '(none)'}",
        )


def _load(repo: Path) -> dict[str, Any]:
    path = repo / "pyproject.toml"
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise InputRefused(f"{path}: no pyproject.toml in the repository") from exc
    except tomllib.TOMLDecodeError as exc:
        raise InputRefused(f"pyproject.toml is not valid TOML: {exc}") from exc


def _table(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = data.get(key, {})
        data = value if isinstance(value, Mapping) else {}
    return data


def read(repo: Path) -> ProjectDeps:
    data = _load(repo)
    project = data.get("project", {})
    uv = data.get("tool", {}).get("uv", {})
    default_groups = uv.get("default-groups", ["dev"])
    return ProjectDeps(
        extras=tuple(project.get("optional-dependencies", {}) or ()),
        groups=tuple(data.get("dependency-groups", {}) or ()),
        default_groups=tuple(default_groups) if isinstance(default_groups, list) else (),
    )


def required_uv_version(repo: Path) -> str | None:
    """`[tool.uv] required-version`, or None when unset or the pyproject is unreadable
    (a broken pyproject is uv's to report, in its own words)."""
    try:
        data = _load(repo)
    except (InputRefused, OSError):
        return None
    value = _table(data, "tool", "uv").get("required-version")
    return value if isinstance(value, str) else None


def requires_python(repo: Path) -> str | None:
    """`[project] requires-python`, or None when unset or the pyproject is unreadable."""
    try:
        data = _load(repo)
    except (InputRefused, OSError):
        return None
    value = _table(data, "project").get("requires-python")
    return value if isinstance(value, str) else None


def protected_packages(dockerfile: Path, fallback: tuple[str, ...]) -> tuple[str, ...]:
    """The Dockerfile's `--no-install-package` list: what the base image already provides."""
    try:
        text = dockerfile.read_text(encoding="utf-8")
    except OSError:
        return fallback
    found = list(dict.fromkeys(_NO_INSTALL.findall(text)))
    return tuple(found) or fallback
