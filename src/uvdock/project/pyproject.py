"""What the target repository's pyproject.toml and Dockerfile say about dependencies.

Read-only. Names are compared PEP 503-normalized, the way uv does.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.names import normalize_name

_NO_INSTALL = re.compile(r"--no-install-package[= ]+([A-Za-z0-9][A-Za-z0-9._-]*)")


class ProjectDeps(NamedTuple):
    extras: tuple[str, ...]
    groups: tuple[str, ...]
    default_groups: tuple[str, ...]
    required_uv: str | None

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


def read(repo: Path) -> ProjectDeps:
    path = repo / "pyproject.toml"
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError as exc:
        raise InputRefused(f"{path}: no pyproject.toml in the repository") from exc
    except tomllib.TOMLDecodeError as exc:
        raise InputRefused(f"pyproject.toml is not valid TOML: {exc}") from exc
    project = data.get("project", {})
    uv = data.get("tool", {}).get("uv", {})
    default_groups = uv.get("default-groups", ["dev"])
    return ProjectDeps(
        extras=tuple(project.get("optional-dependencies", {}) or ()),
        groups=tuple(data.get("dependency-groups", {}) or ()),
        default_groups=tuple(default_groups) if isinstance(default_groups, list) else (),
        required_uv=uv.get("required-version"),
    )


def protected_packages(dockerfile: Path, fallback: tuple[str, ...]) -> tuple[str, ...]:
    """The Dockerfile's `--no-install-package` list: what the base image already provides."""
    try:
        text = dockerfile.read_text(encoding="utf-8")
    except OSError:
        return fallback
    found = list(dict.fromkeys(_NO_INSTALL.findall(text)))
    return tuple(found) or fallback
