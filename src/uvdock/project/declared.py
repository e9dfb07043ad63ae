"""Which distributions the project declares, and where: for `doctor`, a module a log could
not import needs a sync when declared. Import names match PEP 503-normalised, or known ones."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from uvdock.project import pyproject
from uvdock.project.names import normalize_name

_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


class Declared(NamedTuple):
    distribution: str  # as the project spells it
    where: str  # "[project] dependencies", "the `dev` extra", "the `test` dependency group"
    sync: str  # the uvdock command that installs it


def declarations(data: Mapping[str, Any]) -> dict[str, Declared]:
    """Normalised distribution name -> its first declaration (dependencies, extras, groups)."""
    project = pyproject.table(data, "project")
    sources = [(project.get("dependencies"), "[project] dependencies", "uvdock sync")]
    for name, requirements in pyproject.table(project, "optional-dependencies").items():
        # The name is the repository's: one quoted word in a command the user may paste.
        sync = "--profile lts --lts" if name == "lts" else f"--extra {shlex.quote(str(name))}"
        sources.append((requirements, f"the `{name}` extra", f"uvdock sync {sync}"))
    for name, requirements in pyproject.table(data, "dependency-groups").items():
        sync = f"uvdock sync --group {shlex.quote(str(name))}"
        sources.append((requirements, f"the `{name}` dependency group", sync))
    found: dict[str, Declared] = {}
    for requirements, where, sync in sources:
        for item in requirements if isinstance(requirements, list) else ():
            # A group may hold {include-group = "..."} tables.
            if isinstance(item, str) and (match := _REQUIREMENT_NAME.match(item)):
                found.setdefault(normalize_name(match[1]), Declared(match[1], where, sync))
    return found


def read(repo: Path) -> dict[str, Declared]:
    return declarations(pyproject.data(repo))


def for_module(found: Mapping[str, Declared], module: str) -> Declared | None:
    from uvdock.doctor.import_names import distributions

    candidates = map(normalize_name, (*(distributions(module) or ()), module.split(".")[0]))
    return next((found[name] for name in candidates if name in found), None)
