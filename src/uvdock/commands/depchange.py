"""`uv add` / `uv remove` in the container, checked against the project's real groups and extras."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from uvdock.commands.base import shim_for
from uvdock.context import Context
from uvdock.errors import InputRefused
from uvdock.names import normalize_name

# uv add also takes unnamed requirements: a URL or a local path (uv reads the name from it).
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?:(?P<userinfo>[^/@\s]*)@)?[^\s]*$")
_PATH_START = ("./", "../", "/", "~/", ".")
_ARCHIVE_END = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz")


def _credentials(url: str) -> bool:
    """A URL that carries a secret: a password, or any userinfo over http(s) (a token)."""
    match = _URL.match(url.strip())
    if match is None or match.group("userinfo") is None:
        return False
    userinfo = match.group("userinfo")
    return ":" in userinfo or match.group("scheme").lower().endswith(("http", "https"))


def _unnamed(spec: str) -> bool:
    """A URL or local path, as `uv add` accepts without a name."""
    return bool(_URL.match(spec)) or spec.startswith(_PATH_START) or spec.endswith(_ARCHIVE_END)


def _validate(action: str, packages: Sequence[str]) -> list[str]:
    """Accept what packaging's Requirement accepts (and uv's unnamed URL/path requirements).

    Nothing reaches a shell (argv lists only), so `<`, `>`, `;`, quotes and spaces are legal.
    Refused: words starting with `-` (uv would read them as options) and URLs with secrets.
    """
    from packaging.requirements import InvalidRequirement, Requirement

    names = []
    for spec in packages:
        if spec.lstrip().startswith("-"):
            raise InputRefused(
                f"{spec!r} starts with `-`: uv would read it as an option, not a requirement"
            )
        try:
            requirement = Requirement(spec)
        except InvalidRequirement as exc:
            if action == "add" and _unnamed(spec.strip()):
                _refuse_credentials(spec, spec.strip())
                names.append(spec.strip())
                continue
            reason = str(exc).splitlines()[0] if str(exc) else "unparsable"
            raise InputRefused(f"{spec!r} is not a valid requirement: {reason}") from None
        _refuse_credentials(spec, requirement.url or "")
        if action == "remove" and (requirement.specifier or requirement.url or requirement.marker):
            raise InputRefused(f"{spec!r}: `remove` takes package names only")
        names.append(requirement.name)
    return names


def _refuse_credentials(spec: str, url: str) -> None:
    if _credentials(url):
        raise InputRefused(
            f"{spec!r}: the URL carries credentials, which would be written to pyproject.toml",
            hint="drop them from the URL; give uv the credentials through its index settings "
            "or a netrc file",
        )


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

    if action == "add" and optional is not None and normalize_name(optional) == "lts":
        raise InputRefused(
            "the lts extra is not edited with `uvdock add`: LTS pins live in "
            f"{ctx.config.lts_requirements}",
            hint="use `uvdock lts pin NAME==VERSION --lts`",
        )
    names = _validate(action, packages)
    uv_args = [action, *_target_args(ctx, group, optional), *packages]
    shim = shim_for(ctx)
    if shim.placement.mode == "srun":  # a pyxis container is thrown away: nothing to sync
        uv_args.insert(1, "--no-sync")
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
