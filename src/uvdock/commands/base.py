"""What every command module provides: a class named Command deriving from this one."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from uvdock.context import Context


class Command:
    #: One line for `uvdock --help`; the table in cli.py repeats it so help stays lazy.
    help: ClassVar[str] = ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """Add this command's own arguments."""

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        raise NotImplementedError
