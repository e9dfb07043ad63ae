"""Which distributions the project declares, and where (dependencies, an extra, a group).

`doctor` asks it about a module a log could not import: a declared one needs a sync, not
`uvdock add`. An import name is matched to distribution names PEP 503-normalised
(`flash_attn` is `flash-attn`), plus the well-known ones whose names differ (`yaml` is
PyYAML). Read-only; an unreadable pyproject.toml declares nothing.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from uvdock.files import textlines
from uvdock.project.names import normalize_name

_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


class Declared(NamedTuple):
    distribution: str  # as the project spells it
    where: str  # "[project] dependencies", "the `dev` extra", "the `test` dependency group"
    sync: str  # the uvdock command that installs it


def _names(requirements: object) -> Iterable[str]:
    if not isinstance(requirements, list):
        return
    for item in requirements:  # a group may hold {include-group = "..."} tables
        if isinstance(item, str) and (match := _REQUIREMENT_NAME.match(item)):
            yield match.group(1)


def _sources(data: Mapping[str, Any]) -> Iterable[tuple[object, str, str]]:
    project = data.get("project")
    project = project if isinstance(project, Mapping) else {}
    yield project.get("dependencies"), "[project] dependencies", "uvdock sync"
    extras = project.get("optional-dependencies")
    for extra, requirements in (extras if isinstance(extras, Mapping) else {}).items():
        # The name is the repository's: one quoted word in a command the user may paste.
        sync = (
            "uvdock sync --profile lts --lts"
            if extra == "lts"
            else f"uvdock sync --extra {shlex.quote(str(extra))}"
        )
        yield requirements, f"the `{extra}` extra", sync
    groups = data.get("dependency-groups")
    for group, requirements in (groups if isinstance(groups, Mapping) else {}).items():
        yield (
            requirements,
            f"the `{group}` dependency group",
            f"uvdock sync --group {shlex.quote(str(group))}",
        )


def declarations(data: Mapping[str, Any]) -> dict[str, Declared]:
    """Normalised distribution name -> its first declaration (dependencies, extras, groups)."""
    found: dict[str, Declared] = {}
    for requirements, where, sync in _sources(data):
        for name in _names(requirements):
            found.setdefault(normalize_name(name), Declared(name, where, sync))
    return found


def read(repo: Path) -> dict[str, Declared]:
    try:
        return declarations(tomllib.loads(textlines.read_text(repo / "pyproject.toml")))
    except (OSError, ValueError, RecursionError):  # unreadable, not UTF-8, not TOML: none
        return {}


def for_module(found: Mapping[str, Declared], module: str) -> Declared | None:
    """The declaration that provides import name `module`, if the project has one."""
    from uvdock.doctor.import_names import distributions

    candidates = (*(distributions(module) or ()), module.split(".")[0])
    for name in candidates:
        if (hit := found.get(normalize_name(name))) is not None:
            return hit
    return None
