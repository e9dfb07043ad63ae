"""`uv add` / `uv remove` in the container, checked against the project's real groups and extras.

uv runs with `--no-sync`: its own sync is exact and knows nothing of the image, so in a
running CI container it would uninstall what other groups installed and reinstall what
the base image provides. A persistent container (exec, or local: already inside one) is
then brought up to date by `uvdock sync`'s own inexact, Dockerfile-selected, protected
sync; a throwaway container (run, srun without a named pyxis container) is not synced at
all: it is gone a moment later.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from uvdock.commands.base import Command, shim_for
from uvdock.commands.lock.diff_view import add_lock_format_option
from uvdock.context import Context
from uvdock.errors import CommandFailed, InputRefused
from uvdock.project.names import normalize_name
from uvdock.ui.redact import url_credentials

if TYPE_CHECKING:
    from uvdock.run.ci_container import CIContainer

# uv add also takes unnamed requirements: a URL or a local path (uv reads the name from it).
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^\s]*$")
_PATH_START = ("./", "../", "/", "~/", ".")
_ARCHIVE_END = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz")


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
    if url_credentials(url):
        raise InputRefused(
            f"{spec!r}: the URL carries credentials, which would be written to pyproject.toml",
            hint="drop them from the URL; give uv the credentials through its index settings "
            "or a netrc file",
        )


def _target_args(ctx: Context, action: str, group: str | None, optional: str | None) -> list[str]:
    from uvdock.project import pyproject

    if group is None and optional is None:
        return []
    deps = pyproject.read(ctx.project)
    name = group if group is not None else optional
    assert name is not None
    declared = {normalize_name(n) for n in (*deps.extras, *deps.groups)}
    if action == "add" and normalize_name(name) not in declared:
        # uv creates the group or extra; say so, the user may have mistyped an existing one.
        what = "dependency group" if group is not None else "extra"
        ctx.out.info(
            f"`{name}` is a new {what}: uv will create it "
            f"(extras: {', '.join(deps.extras) or '(none)'}; "
            f"groups: {', '.join(deps.groups) or '(none)'})"
        )
        return ["--group", name] if group is not None else ["--optional", name]
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


class DependencyChange(Command):
    """`uvdock add` and `uvdock remove`: the same options, uv's verb and its help words."""

    action = ""
    helps = ("", "", "")  # PKG, --group, --optional

    def configure(self, parser: argparse.ArgumentParser) -> None:
        packages, group, optional = self.helps
        parser.add_argument("packages", nargs="+", metavar="PKG", help=packages)
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--group", metavar="G", help=group)
        where.add_argument("--optional", metavar="X", help=optional)
        parser.add_argument(
            "--no-sync",
            action="store_true",
            help="do not bring a running container's environment up to date afterwards",
        )
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        return change_dependencies(
            ctx,
            self.action,
            args.packages,
            group=args.group,
            optional=args.optional,
            fmt=args.format,
            sync=not args.no_sync,
        )


def change_dependencies(
    ctx: Context,
    action: str,
    packages: Sequence[str],
    *,
    group: str | None,
    optional: str | None,
    fmt: str = "text",
    sync: bool = True,
) -> int:
    from uvdock.commands import uvwork

    target_name = optional if optional is not None else group
    if target_name is not None and normalize_name(target_name) == "lts":
        # LTS is opt-in everywhere: neither add nor remove touches it, under any spelling.
        raise InputRefused(
            f"the lts extra is not edited with `uvdock {action}`: LTS pins live in "
            f"{ctx.config.lts_requirements}",
            hint="use `uvdock lts pin NAME==VERSION --lts`",
        )
    names = _validate(action, packages)
    target = _target_args(ctx, action, group, optional)
    uv_args = [action, "--no-sync", *target, *packages]
    shim = shim_for(ctx)
    uvwork.report_uv(ctx, shim)
    before = uvwork.lock_bytes(ctx)
    code = shim.run_uv(uv_args, writes=("pyproject.toml", "uv.lock"))
    if code != 0 and not ctx.dry_run:
        raise uvwork.uv_failed(uv_args, code)
    if not ctx.dry_run:
        uvwork.show_lock_change(ctx, before, fmt)
    _sync_after(ctx, shim, action, target if action == "add" else [], sync=sync)
    if ctx.dry_run:
        return 0
    if not ctx.options.json:
        ctx.out.info("next: commit the change")
        ctx.out.info(f"  git add {_project_files(ctx)}")
        ctx.out.info(
            "  "
            + shlex.join(
                ["git", "commit", "-s", "-m", f"build: {action} {', '.join(names)} dependency"]
            )
        )
    return 0


def _sync_after(
    ctx: Context, shim: CIContainer, action: str, target: list[str], *, sync: bool
) -> None:
    """Bring a persistent environment up to date the way `uvdock sync` does; else say why not."""
    placement = shim.placement
    if not placement.outlives_command():
        ctx.out.info(
            f"not syncing: the {placement.engine} container uv ran in is removed when it exits "
            "(a running container, --container NAME, is brought up to date)"
        )
        return
    if not sync:
        ctx.out.info("not syncing (--no-sync); `uvdock sync` brings the environment up to date")
        return
    from uvdock.commands import sync as sync_command

    kind, name = (target[0], target[1]) if target else ("", "")
    plan = sync_command.environment_plan(
        ctx,
        groups=[name] if kind == "--group" else [],
        extras=[name] if kind == "--optional" else [],
        created=action == "add",
    )
    for note in plan.notes:
        ctx.out.warn(note)
    shim.srun.tasks = "every node"  # on Slurm: each node's container, in parallel
    if not ctx.dry_run:
        ctx.out.info(f"syncing the environment {placement.describe()} (inexact: removes nothing)")
    code = shim.run_uv(plan.uv_args)
    if code != 0 and not ctx.dry_run:
        raise CommandFailed(
            ["uv", *plan.uv_args],
            code,
            message=f"uv {action} succeeded (pyproject.toml and uv.lock are changed), but the "
            f"sync after it failed (exit {code}); uv's output is above",
        )
    if action == "remove" and not ctx.dry_run:
        ctx.out.info(
            "what is no longer needed stays installed (the sync is inexact); "
            "`uvdock sync --exact` removes it"
        )


def _project_files(ctx: Context) -> str:
    """pyproject.toml and uv.lock as `git add` reads them from where the user is."""
    if not ctx.project_path:
        return "pyproject.toml uv.lock"
    import os

    return shlex.join(
        os.path.relpath(ctx.project / f, ctx.cwd) for f in ("pyproject.toml", "uv.lock")
    )
