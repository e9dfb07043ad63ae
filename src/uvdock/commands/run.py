"""`uvdock run [--] CMD...`: any command in the CI container; the exit code is the command's."""

from __future__ import annotations

import argparse
from typing import ClassVar

from uvdock.commands.base import Command as BaseCommand
from uvdock.context import Context
from uvdock.errors import InputRefused


class Command(BaseCommand):
    help: ClassVar[str] = "run any command in the CI container"

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("cmd", nargs=argparse.REMAINDER, help="the command and its arguments")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.shim import Shim

        command = list(args.cmd)
        if command[:1] == ["--"]:
            command = command[1:]
        if not command:
            raise InputRefused("no command given: uvdock run -- CMD [ARGS...]")
        return Shim(ctx).run(command)
