"""`uvdock merge-driver install`: make git stop on uv.lock without writing conflict markers.

A textual merge of uv.lock is never trustworthy: a clean one can combine two resolutions no
resolver produced, a conflicted one holds markers uv cannot parse. So the driver
`uvdock-lock` never merges: it leaves %A (the current side, a clean lock) and exits 1, git
records the three index stages and stops, and `uvdock lock resolve` relocks on the right
lock. A plain shell line, so it works where uvdock is not on PATH. `--pyproject` adds
`uvdock-pyproject`, which runs this uvdock (the interpreter's absolute path) on
pyproject.toml. Only this clone changes: .git/config and .git/info/attributes, not the
shared .gitattributes.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
from pathlib import Path

from uvdock.commands.base import Command as BaseCommand
from uvdock.context import Context
from uvdock.files.edit import FileEdit, apply, ensure_folder, plan_diff, read_text
from uvdock.run import git

DRIVER = "uvdock-lock"
ATTRIBUTE_LINE = f"uv.lock merge={DRIVER}"
PYPROJECT_DRIVER = "uvdock-pyproject"


def attributes_edit(path: Path, display: str, wanted: tuple[str, ...]) -> FileEdit:
    old = read_text(path) if path.is_file() else ""
    present = {line.strip() for line in old.splitlines()}
    missing = "".join(f"{line}\n" for line in wanted if line not in present)
    gap = "\n" if missing and old and not old.endswith("\n") else ""
    return FileEdit(path, old, old + gap + missing, display)


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "Register, in this clone only, a merge driver that stops on uv.lock conflicts "
            "without writing conflict markers (the file stays a clean copy of the current "
            "side); finish with `uvdock lock resolve`."
        )
        parser.add_argument(
            "--pyproject",
            action="store_true",
            help="also merge pyproject.toml's dependency declarations during git merge/rebase "
            "(git's conflict markers when there is a real conflict)",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        with _shared_lock(ctx):
            repo = ctx.repo
            wanted = {
                f"merge.{DRIVER}.name": "uv.lock: keep one side unmerged, finish with "
                "`uvdock lock resolve`",
                f"merge.{DRIVER}.driver": 'echo "uvdock: kept one side of %P unmerged (no conflict '
                'markers); finish with: uvdock lock resolve" >&2; exit 1',
            }
            lines: tuple[str, ...] = (ATTRIBUTE_LINE,)
            if args.pyproject:
                command = shlex.join([sys.executable, "-m", "uvdock", "merge-driver", "pyproject"])
                wanted[f"merge.{PYPROJECT_DRIVER}.name"] = (
                    "pyproject.toml: merge dependency declarations (uvdock)"
                )
                wanted[f"merge.{PYPROJECT_DRIVER}.driver"] = (
                    f"{command} --marker-size %L --labels %S %X %Y %O %A %B %P"
                )
                lines += (f"pyproject.toml merge={PYPROJECT_DRIVER}",)
            config_changes = {k: v for k, v in wanted.items() if git.config_get(repo, k) != v}
            attributes = git.git_path(repo, "info/attributes")
            edit = attributes_edit(attributes, ".git/info/attributes", lines)
            changed = bool(config_changes) or edit.changed
            for key, value in config_changes.items():
                if ctx.dry_run:
                    ctx.out.command(["git", "config", "--local", key, value])
                else:
                    git.config_set(repo, key, value)
            if ctx.dry_run:
                ctx.out.diff(plan_diff([edit]))
            elif edit.changed:
                ensure_folder(attributes.parent)
                apply([edit])
            if ctx.out.json_mode:
                ctx.out.json(
                    {
                        "driver": DRIVER,
                        "config": wanted,
                        "attributes": attributes,
                        "attribute_line": ATTRIBUTE_LINE,
                        "attribute_lines": list(lines),
                        "changed": changed,
                    }
                )
                return 0
            if not changed:
                ctx.out.info(f"merge driver {DRIVER} is already installed in this clone")
            elif not ctx.dry_run:
                ctx.out.info(f"installed merge driver {DRIVER} for uv.lock in this clone")
                if args.pyproject:
                    ctx.out.info(f"installed merge driver {PYPROJECT_DRIVER} for pyproject.toml")
            ctx.out.info(
                "a merge, rebase or cherry-pick that changes uv.lock on both sides now stops with "
                "uv.lock unmerged but free of conflict markers; then run `uvdock lock resolve`"
            )
            return 0


def _shared_lock(ctx: Context) -> contextlib.AbstractContextManager[object]:
    """The repository lock of the common git dir: a linked worktree shares info/attributes
    and the config with the main one, and its own lock (per worktree) does not keep two
    installs from reading the same attributes and each writing back its own line."""
    if ctx.dry_run:
        return contextlib.nullcontext()
    from uvdock.commands.base import common_git_dir
    from uvdock.files import repolock

    path = repolock.lock_path(common_git_dir(git.git_dir(ctx.repo)))
    return repolock.held(path, "uvdock merge-driver install", ctx.config.lock_timeout)
