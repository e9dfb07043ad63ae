"""`uvdock run [--] CMD...`: any command in the CI container; the exit code is the command's."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

from uvdock.commands import base
from uvdock.errors import InputRefused

if TYPE_CHECKING:
    import argparse

    from uvdock.context import Context


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        import argparse

        parser.add_argument("cmd", nargs=argparse.REMAINDER, help="the command and its arguments")

    def parse(
        self, words: list[str], make_parser: Callable[[], argparse.ArgumentParser]
    ) -> argparse.Namespace:
        # Everything after the global options belongs to the command, so argparse (whose
        # import and set-up would double uvdock's own start-up) is needed only for --help.
        from uvdock.cli.spec import scan_global_options

        scanned = None if words[:1] in (["-h"], ["--help"]) else scan_global_options(words)
        if scanned is None or scanned[0].get("version"):
            return super().parse(words, make_parser)
        found, command = scanned
        return cast("argparse.Namespace", SimpleNamespace(cmd=command, **found))

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        command = list(args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd)
        if not command:
            raise InputRefused("no command given: uvdock run -- CMD [ARGS...]")
        from uvdock.run.ci_container import CIContainer

        shim = CIContainer.of(ctx)
        shim.srun.tasks = "follow"  # on Slurm: the allocation's nodes, as srun itself would
        return shim.run(command)
