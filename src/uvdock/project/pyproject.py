"""What the repository's pyproject.toml says about dependencies (read-only)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, NamedTuple

from uvdock.errors import InputRefused
from uvdock.files import textlines
from uvdock.project.names import normalize_name


class ProjectDeps(NamedTuple):
    extras: tuple[str, ...]
    groups: tuple[str, ...]

    def classify(self, name: str) -> str:
        """'extra' or 'group' for a name, by what the project really declares."""
        for kind, names in (("extra", self.extras), ("group", self.groups)):
            if normalize_name(name) in map(normalize_name, names):
                return kind
        raise InputRefused(
            f"`{name}` is neither an extra nor a dependency group of this project",
            hint=f"extras: {', '.join(self.extras) or '(none)'}; "
            f"groups: {', '.join(self.groups) or '(none)'}",
        )


def _load(repo: Path) -> dict[str, Any]:
    path = repo / "pyproject.toml"
    try:
        return tomllib.loads(textlines.read_text(path))
    except FileNotFoundError as exc:
        raise InputRefused(f"{path}: no pyproject.toml in the repository") from exc
    except (ValueError, RecursionError) as exc:  # bad TOML or UTF-8, a 5000-digit integer
        raise InputRefused(f"pyproject.toml is not valid TOML: {exc}") from None


def table(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = data.get(key, {})
        data = value if isinstance(value, Mapping) else {}
    return data


def data(repo: Path) -> dict[str, Any]:
    """The pyproject's data; empty when unreadable (uv reports a broken one in its words)."""
    try:
        return _load(repo)
    except (InputRefused, OSError):
        return {}


def _string(repo: Path, *keys: str) -> str | None:
    value = table(data(repo), *keys[:-1]).get(keys[-1])
    return value if isinstance(value, str) else None


def read(repo: Path) -> ProjectDeps:
    found = _load(repo)
    return ProjectDeps(
        extras=tuple(table(found, "project", "optional-dependencies")),
        groups=tuple(table(found, "dependency-groups")),
    )


def required_uv_version(repo: Path) -> str | None:
    return _string(repo, "tool", "uv", "required-version")


def requires_python(repo: Path) -> str | None:
    return _string(repo, "project", "requires-python")


def enclosing_project(top: Path, start: Path) -> Path:
    """The uv project a command started in `start` acts on, as uv picks its lock: the nearest
    folder with pyproject.toml and uv.lock, or the workspace between it and `top` listing it;
    else `top`."""
    if start != top and top not in start.parents:
        return top
    for folder in (start, *start.parents):
        if folder == top:
            return top
        if (folder / "pyproject.toml").is_file() and (folder / "uv.lock").is_file():
            for root in folder.parents:
                workspace = table(data(root), "tool", "uv", "workspace")
                rel = folder.relative_to(root).as_posix()
                if _listed(workspace, "members", rel) and not _listed(workspace, "exclude", rel):
                    return root
                if root == top:
                    break
            return folder
    return top


def _listed(workspace: Mapping[str, Any], key: str, rel: str) -> bool:
    """`rel` matches one of uv's member globs (`*` stays within one path segment)."""
    parts, globs = rel.split("/"), workspace.get(key)
    return isinstance(globs, list) and any(
        len(pattern) == len(parts) and all(map(fnmatchcase, parts, pattern))
        for pattern in (str(glob).strip("/").split("/") for glob in globs)
    )
