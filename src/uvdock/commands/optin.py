"""The one LTS opt-in rule, shared by every action that touches the LTS lane.

LTS is the older long-term-support NGC base. It changes only when a maintainer explicitly
asks, so every LTS action (`lts pin`, `sync --profile lts`, `image bump --lts`,
`image build --lts`, ...) is refused without `--lts`, always with the same message: the
policy and the user's own command with `--lts` added, ready to copy.

Usage in a command module::

    from uvdock.commands import optin

    def configure(self, parser):
        optin.add_lts_flag(parser)

    def run(self, ctx, args):
        optin.require_lts(args.lts, "lts pin", optin.command_line(ctx, "lts", "pin", *args.specs))
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from uvdock.errors import InputRefused

if TYPE_CHECKING:
    from uvdock.context import Context

LTS_FLAG = "--lts"
LTS_POLICY = (
    "LTS is the older long-term-support base; it changes only when a maintainer explicitly asks"
)
LTS_HINT = (
    "the LTS lane (docker/.ngc_version.lts, docker/Dockerfile.ci.lts, "
    "docker/lts/requirements.txt, the container::lts label) is never touched without --lts"
)


def add_lts_flag(parser: argparse.ArgumentParser, help_text: str | None = None) -> None:
    """Add the `--lts` opt-in flag (dest `lts`, default False) to a command's parser."""
    parser.add_argument(
        LTS_FLAG,
        action="store_true",
        dest="lts",
        help=help_text or "explicit opt-in: " + LTS_POLICY,
    )


def command_line(ctx: Context, *words: str) -> list[str]:
    """The user's command as argv, rebuilt from the global options and the command's words.

    Pass the command's own words and arguments (e.g. "lts", "pin", *specs, "--add");
    `--repo` and `--dry-run` are put back from the global options so the suggestion runs
    the same way.
    """
    argv = ["uvdock"]
    if ctx.options.repo:
        argv += ["--repo", ctx.options.repo]
    if ctx.options.dry_run:
        argv.append("--dry-run")
    return [*argv, *words]


def with_lts_flag(argv: Sequence[str]) -> list[str]:
    """argv with `--lts` appended (once)."""
    return list(argv) if LTS_FLAG in argv else [*argv, LTS_FLAG]


def refusal_message(action: str, argv: Sequence[str]) -> str:
    """The one message every LTS action shows when `--lts` is missing."""
    command = shlex.join(with_lts_flag(argv))
    return f"{action} changes the LTS lane; {LTS_POLICY}; re-run with --lts: {command}"


def require_lts(opted_in: bool, action: str, argv: Sequence[str]) -> None:
    """Refuse (InputRefused, exit 2, nothing changed) unless the user passed `--lts`.

    `action` names what was asked ("lts pin", "image bump --lts"); `argv` is the user's
    command as typed (see `command_line`); the message shows it with `--lts` added.
    """
    if not opted_in:
        raise InputRefused(refusal_message(action, argv), hint=LTS_HINT)
