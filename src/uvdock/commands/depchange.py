"""`uv add` / `uv remove` in the container, checked against the project's real groups and extras."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from uvdock.commands.base import shim_for
from uvdock.commands.context import Context
from uvdock.errors import InputRefused

_UNSAFE = re.compile(r"[;&|`$<>\\\n\r]")


def _validate(action: str, packages: Sequence[str]) -> list[str]:
    from packaging.requirements import InvalidRequirement, Requirement

    names = []
    for spec in packages:
        if _UNSAFE.search(spec.split(";", 1)[0]) or "\n" in spec:
            raise InputRefused(f"{spec!r}: shell metacharacters are not part of a requirement")
        try:
            requirement = Requirement(spec)
        except InvalidRequirement as exc:
            reason = str(exc).splitlines()[0] if str(exc) else "unparsable"
            raise InputRefused(f"{spec!r} is not a valid requirement: {reason}") from None
        if action == "remove" and (requirement.specifier or requirement.url or requirement.marker):
            raise InputRefused(f"{spec!r}: `remove` takes package names only")
        names.append(requirement.name)
    return names


def _target_args(ctx: Context, group: str | None, optional: str | None) -> list[str]:
    from uvdock.project import pyproject

    if group is None and optional is None:
        return []
    deps = pyproject.read(ctx.repo)
    name = group if group is not None else optional
    assert name is not None
    kind = deps.classify(name)
    if group is not None and kind == "extra":
        raise InputRefused(
            f"`{name}` is an extra of this project, not a dependency group",
            hint=f"use --optional {name}",
        )
    if optional is not None and kind == "group":
        raise InputRefused(
            f"`{name}` is a dependency group of this project, not an extra",
            hint=f"use --group {name}",
        )
    return ["--group", name] if kind == "group" else ["--optional", name]


def change_dependencies(
    ctx: Context,
    action: str,
    packages: Sequence[str],
    *,
    group: str | None,
    optional: str | None,
    fmt: str = "text",
) -> int:
    from uvdock.commands import uvwork

    names = _validate(action, packages)
    uv_args = [action, *_target_args(ctx, group, optional), *packages]
    shim = shim_for(ctx)
    uvwork.report_uv(ctx, shim)
    before = uvwork.lock_bytes(ctx)
    code = shim.run_uv(uv_args, writes=("pyproject.toml", "uv.lock"))
    if ctx.dry_run:
        return 0
    if code != 0:
        raise uvwork.uv_failed(uv_args, code)
    uvwork.show_lock_change(ctx, before, fmt)
    verb = "add" if action == "add" else "remove"
    if not ctx.options.json:
        ctx.out.info("next: commit the change")
        ctx.out.info("  git add pyproject.toml uv.lock")
        ctx.out.info(
            "  "
            + shlex.join(
                ["git", "commit", "-s", "-m", f"build: {verb} {', '.join(names)} dependency"]
            )
        )
    return 0
