"""argparse parsers for uvdock: the top level (help, errors) and each command's own.

Imported only when a parser is needed: the common paths are read by
`uvdock.cli_spec.scan_global_options`, which costs nothing to import.
"""

from __future__ import annotations

import argparse

from uvdock import __version__
from uvdock.cli_spec import COMMANDS, GLOBAL_OPTIONS, CommandSpec
from uvdock.errors import InputRefused


def add_global_options(parser: argparse.ArgumentParser, *, after_command: bool) -> None:
    # After the command the same options are accepted but must not reset what was given before.
    for option in GLOBAL_OPTIONS:
        if option.metavar:
            parser.add_argument(
                *option.flags,
                dest=option.dest,
                metavar=None if option.choices else option.metavar,
                choices=option.choices,
                default=argparse.SUPPRESS if after_command else None,
                help=option.help,
            )
        else:
            parser.add_argument(
                *option.flags,
                dest=option.dest,
                action="store_true",
                default=argparse.SUPPRESS if after_command else False,
                help=option.help,
            )


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so the root handler owns exit codes."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise InputRefused(f"{self.prog}: {message}")


def top_parser() -> argparse.ArgumentParser:
    lines = []
    for (group, name), spec in COMMANDS.items():
        lines.append(f"  {(group + ' ' + name).strip():<22} {spec.help}")
    parser = Parser(
        prog="uvdock",
        description="uv inside the CI container, and honest pins, for Megatron-LM-style repositories.",
        epilog="commands:\n"
        + "\n".join(lines)
        + "\n\nexit codes: 0 done, 1 check failed or command failed, "
        "2 input refused, 3 environment unusable, 4 internal error, 130 interrupted",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"uvdock {__version__}")
    add_global_options(parser, after_command=False)
    parser.add_argument("command", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def command_parser(key: tuple[str, str], spec: CommandSpec) -> argparse.ArgumentParser:
    siblings = [n for g, n in COMMANDS if g == key[0] and n] if not key[1] else []
    epilog = (
        "subcommands:\n"
        + "\n".join(f"  {key[0]} {n:<12} {COMMANDS[(key[0], n)].help}" for n in siblings)
        if siblings
        else None
    )
    parser = Parser(
        prog="uvdock " + " ".join(p for p in key if p),
        description=spec.help,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_global_options(parser, after_command=True)
    return parser
