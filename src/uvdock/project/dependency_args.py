"""What `uv add` / `uv remove` are given: each requirement checked, the group or extra named as
the project declares it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement

from uvdock.errors import InputRefused
from uvdock.project import pyproject
from uvdock.ui.redact import url_credentials

if TYPE_CHECKING:
    from pathlib import Path

# uv add also takes unnamed requirements: a URL, a local path or an archive (uv reads the name).
_UNNAMED = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*://\S*|(?:\.|/|~/).*|.*\.(?:whl|tar\.gz|zip|tar\.bz2|tgz)", re.S
)
_KINDS = {"group": ("a", "dependency group", "--group"), "extra": ("an", "extra", "--optional")}


def requirement_names(action: str, packages: Sequence[str]) -> list[str]:
    """Accept what packaging's Requirement accepts (and uv's unnamed URL/path requirements).
    Nothing reaches a shell, so `<`, `;`, quotes and spaces are legal; refused are words
    starting with `-` (uv would read them as options) and URLs with secrets."""
    names = []
    for spec in packages:
        if spec.lstrip().startswith("-"):
            raise InputRefused(
                f"{spec!r} starts with `-`: uv would read it as an option, not a requirement"
            )
        try:
            requirement: Requirement | None = Requirement(spec)
        except InvalidRequirement as exc:
            if action != "add" or not _UNNAMED.fullmatch(spec.strip()):
                reason = str(exc).splitlines()[0] if str(exc) else "unparsable"
                raise InputRefused(f"{spec!r} is not a valid requirement: {reason}") from None
            requirement = None
        if url_credentials(spec.strip() if requirement is None else requirement.url or ""):
            raise InputRefused(
                f"{spec!r}: the URL carries credentials, which would be written to pyproject.toml",
                hint="drop them from the URL; give uv the credentials through its index settings "
                "or a netrc file",
            )
        if requirement is None:  # an unnamed requirement for `add`: uv reads its name
            names.append(spec.strip())
            continue
        if action == "remove" and (requirement.specifier or requirement.url or requirement.marker):
            raise InputRefused(f"{spec!r}: `remove` takes package names only")
        names.append(requirement.name)
    return names


def target_args(
    project: Path, action: str, group: str | None, optional: str | None
) -> tuple[list[str], str]:
    """uv's `--group G` / `--optional X` as the project declares it, and a note when `add`
    creates it (the user may have mistyped an existing one)."""
    name = group if group is not None else optional
    if name is None:
        return [], ""
    asked = "group" if group is not None else "extra"
    deps = pyproject.read(project)
    try:
        kind = deps.classify(name)
    except InputRefused as exc:  # its hint lists the extras and groups there are
        if action != "add":
            raise
        new = f"`{name}` is a new {_KINDS[asked][1]}: uv will create it ({exc.hint})"
        return [_KINDS[asked][2], name], new
    if kind != asked:
        raise InputRefused(
            f"`{name}` is {' '.join(_KINDS[kind][:2])} of this project, "
            f"not {' '.join(_KINDS[asked][:2])}",
            hint=f"use {_KINDS[kind][2]} {name}",
        )
    return [_KINDS[kind][2], name], ""
