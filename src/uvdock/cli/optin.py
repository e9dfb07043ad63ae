"""The one LTS opt-in rule: every action on the LTS lane (`lts pin`, `sync --profile lts`,
`image bump --lts`, ...) is refused without `--lts`, with the same message: the policy and the
user's own command with `--lts` added, ready to copy."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from uvdock.errors import InputRefused

if TYPE_CHECKING:
    from uvdock.context import Context

LTS_POLICY = (
    "LTS is the older long-term-support base; it changes only when a maintainer explicitly asks"
)


def add_lts_flag(parser: argparse.ArgumentParser, help_text: str | None = None) -> None:
    parser.add_argument(
        "--lts", action="store_true", help=help_text or "explicit opt-in: " + LTS_POLICY
    )


def command_line(ctx: Context, *words: str) -> list[str]:
    """The user's command as argv: `words` after the `--repo` and `--dry-run` given, so a
    suggestion runs the same way."""
    argv = ["uvdock", *(["--repo", ctx.options.repo] if ctx.options.repo else [])]
    return [*argv, *["--dry-run"] * ctx.options.dry_run, *words]


def with_lts_flag(argv: Sequence[str]) -> list[str]:
    return list(argv) if "--lts" in argv else [*argv, "--lts"]


def require_lts(opted_in: bool, action: str, argv: Sequence[str]) -> None:
    """Refuse (exit 2, nothing changed) unless the user passed `--lts`; `action` names what was
    asked, `argv` is the user's command (see `command_line`)."""
    if not opted_in:
        command = shlex.join(with_lts_flag(argv))
        raise InputRefused(
            f"{action} changes the LTS lane; {LTS_POLICY}; re-run with --lts: {command}",
            hint="the LTS lane (docker/.ngc_version.lts, docker/Dockerfile.ci.lts, "
            "docker/lts/requirements.txt, the container::lts label) is never touched without --lts",
        )
