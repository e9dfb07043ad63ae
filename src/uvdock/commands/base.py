"""What every command module provides: a class named Command deriving from this one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from uvdock.commands.context import Context
    from uvdock.run.shim import Shim


class Command:
    """A command's one-line help lives in cli_spec.COMMANDS, so `uvdock --help` imports no command."""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """Add this command's own arguments."""

    def parse(
        self, words: list[str], make_parser: Callable[[], argparse.ArgumentParser]
    ) -> argparse.Namespace:
        """The command's arguments. `make_parser` gives a parser that already knows the
        global options; a command with nothing to parse may skip building it."""
        parser = make_parser()
        self.configure(parser)
        return parser.parse_args(words)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        raise NotImplementedError


def shim_for(ctx: Context) -> Shim:
    """The shim for this invocation: its configuration, repository, environment and output."""
    from uvdock.run.shim import Shim

    return Shim(ctx.config, repo=ctx.repo, env=ctx.env, out=ctx.out, dry_run=ctx.dry_run)


def engine_for(ctx: Context) -> str:
    """docker or podman, as configured or as found (see run.shim.pick_engine)."""
    from uvdock.run.shim import pick_engine

    return pick_engine(ctx.config.engine, ctx.env, dry_run=ctx.dry_run)


def add_format_option(parser: argparse.ArgumentParser, *formats: str, help: str) -> None:
    """`--format text|...`: one spelling for every command with a machine or PR rendering.

    Lives here, not in its own module, so that commands on a start-up budget
    (`image check`) import nothing new for it. --json, where offered, wins over --format.
    """
    parser.add_argument("--format", choices=("text", *formats), default="text", help=help)
