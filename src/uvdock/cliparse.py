"""argparse parsers for uvdock: the top level (help, errors) and each command's own.

Imported only when a parser is needed: the common paths are read by
`uvdock.cli.scan_global_options`, which costs nothing to import.
"""

from __future__ import annotations

import argparse

from uvdock import __version__
from uvdock.cli import COMMANDS, ENGINE_CHOICES, CommandSpec
from uvdock.errors import InputRefused


def add_global_options(parser: argparse.ArgumentParser, *, after_command: bool) -> None:
    # After the command the same options are accepted but must not reset what was given before.
    default = argparse.SUPPRESS if after_command else None
    flag_default = argparse.SUPPRESS if after_command else False
    parser.add_argument(
        "--repo", metavar="PATH", default=default, help="repository (default: git top level of cwd)"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        default=flag_default,
        help="show what would run or change; change nothing",
    )
    parser.add_argument(
        "--json", action="store_true", default=flag_default, help="machine-readable output"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=flag_default,
        help="show commands as they run",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", default=flag_default, help="only errors"
    )
    parser.add_argument(
        "--engine", choices=ENGINE_CHOICES, default=default, help="where uv runs (default: auto)"
    )
    parser.add_argument(
        "--container", metavar="NAME", default=default, help="exec into this running container"
    )
    parser.add_argument(
        "--image", metavar="REF", default=default, help="run an ephemeral container of this image"
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
