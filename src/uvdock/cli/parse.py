"""argparse parsers for uvdock: the top level, each group and each command, with their help
(command options first, the global options once in their own section, examples last) and
their usage errors (the usage line, one `error:` line, a suggestion for a typo). Imported only
when a parser is needed (cli/main.py reads the common command lines without it)."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from typing import Any

from uvdock import __version__
from uvdock.cli.spec import (
    COMMANDS,
    GLOBAL_OPTIONS,
    CommandSpec,
    GlobalOptions,
    command_groups,
)
from uvdock.errors import UsageError

EXIT_CODES = (
    "exit codes: 0 done, 1 check failed or command failed, 2 input refused, "
    "3 environment unusable, 4 internal error, 130 interrupted"
)


def closest(word: str, candidates: Sequence[str], cutoff: float = 0.7) -> str | None:
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return found[0] if found else None


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting (the root handler owns exit codes), keeps the
    global options out of the usage line and ends its help with examples."""

    global_actions: Sequence[argparse.Action] = ()  # set by add_global_options
    subcommands: Sequence[str] = ()  # for `did you mean` on a word argparse did not take
    trailer = ""  # after the options
    examples: Sequence[str] = ()  # last

    def _own_usage(self) -> None:
        if self.usage is not None:
            return
        own = [a for a in self._actions if a not in self.global_actions]
        formatter = self._get_formatter()
        formatter.add_usage(None, own, self._mutually_exclusive_groups)
        text = formatter.format_help().strip().removeprefix("usage: ")
        if self.global_actions:
            text += " [global options]"
        self.usage = text.replace("%", "%%")

    def format_usage(self) -> str:
        self._own_usage()
        return super().format_usage()

    def format_help(self) -> str:
        self._own_usage()
        text = super().format_help().rstrip("\n") + "\n"
        if self.trailer:
            text += "\n" + self.trailer.rstrip("\n") + "\n"
        if self.examples:
            text += "\nexamples:\n" + "".join(f"  {example}\n" for example in self.examples)
        return text

    def error(self, message: str) -> None:  # type: ignore[override]
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            message = self._unrecognized(message[len(prefix) :].split())
        raise UsageError(message, self.format_usage().strip())

    def _unrecognized(self, words: list[str]) -> str:
        word = words[0]
        if word.startswith("-"):
            flags = [flag for action in self._actions for flag in action.option_strings]
            similar = closest(word.partition("=")[0], flags)
            hint = f"; a similar option exists: {similar}" if similar else ""
            return f"unexpected argument {word}{hint}"
        if similar := closest(word, self.subcommands):
            command = self.prog.removeprefix("uvdock ")
            return f"unknown command `{command} {word}`; did you mean {similar}?"
        return "unexpected arguments: " + " ".join(words)


def add_global_options(parser: Parser, *, after_command: bool, strict: bool = True) -> None:
    """The global options. After the command the same options are accepted but must not
    reset what was given before; `strict=False` takes any value, or none, for an option."""
    group = parser.add_argument_group("global options")
    parser.global_actions = group._group_actions
    for option in GLOBAL_OPTIONS:
        how: dict[str, Any] = {"action": "store_true"}
        if option.metavar and strict:  # argparse shows the choices as the value's name
            how = {"choices": option.choices, "metavar": None if option.choices else option.metavar}
        elif option.metavar:
            how = {"nargs": "?", "metavar": option.metavar}
        default = argparse.SUPPRESS if after_command else None if option.metavar else False
        group.add_argument(
            *option.flags, dest=option.dest, default=default, help=option.help, **how
        )


def global_options(words: Sequence[str]) -> GlobalOptions:
    """The global options wherever they stand before `--`, for a command line that failed
    before they were read (the --json document and --color of its error); the command's own
    words are left alone, and an option that cannot be read counts as not given."""
    parser = Parser(prog="uvdock", add_help=False, allow_abbrev=False)
    add_global_options(parser, after_command=False, strict=False)
    try:
        known, _ = parser.parse_known_args(list(words))
    except UsageError:
        return GlobalOptions()
    return GlobalOptions(**vars(known))


def _width() -> int:
    import shutil

    return max(shutil.get_terminal_size().columns - 2, 40)


def rows(pairs: Sequence[tuple[str, str]], column: int = 24) -> str:
    """Two-column lines (name, help) with the help wrapped to the terminal width."""
    import textwrap

    width, indent = max(_width(), column + 23), " " * (column + 3)
    return "\n".join(
        textwrap.fill(text, width, initial_indent=f"  {name:<{column}} ", subsequent_indent=indent)
        for name, text in pairs
    )


def _command_table() -> str:
    import textwrap

    pairs = [((g + " " + n).strip(), spec.help) for (g, n), spec in COMMANDS.items()]
    pairs.append(("help COMMAND [SUB]", "the help of a command (same as COMMAND --help)"))
    return "commands:\n" + rows(pairs) + "\n\n" + textwrap.fill(EXIT_CODES, _width())


def top_parser() -> Parser:
    parser = Parser(
        prog="uvdock",
        usage="uvdock [global options] COMMAND ...",
        description="uv inside the CI container, and honest pins, for Megatron-LM-style repositories.",
    )
    parser.trailer = _command_table()
    parser.examples = ("uvdock sync", "uvdock image bump 26.08-py3", "uvdock help image bump")
    parser.add_argument("--version", action="version", version=f"uvdock {__version__}")
    add_global_options(parser, after_command=False)
    parser.add_argument("command", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def group_usage(group: str) -> str:
    choices = "{" + ",".join(n for n in command_groups()[group] if n) + "}"
    choices = f"[{choices}]" if "" in command_groups()[group] else choices
    return f"usage: uvdock {group} {choices} ... [global options]"


def _subcommands(group: str, names: Sequence[str]) -> str:
    return "subcommands:\n" + rows(
        [(f"{group} {n}".strip(), COMMANDS[group, n].help) for n in names]
    )


def group_help(group: str) -> str:
    lines = [group_usage(group), "", _subcommands(group, command_groups()[group]), ""]
    lines.append(f"run `uvdock help {group} SUBCOMMAND` for its options and examples\n")
    return "\n".join(lines)


def command_parser(key: tuple[str, str], spec: CommandSpec) -> Parser:
    group, name = key
    siblings = [n for n in command_groups()[group] if n] if not name else []
    parser = Parser(prog="uvdock " + " ".join(p for p in key if p), description=spec.help)
    parser.examples, parser.subcommands = spec.examples, siblings
    parser.trailer = _subcommands(group, siblings) if siblings else ""
    add_global_options(parser, after_command=True)
    return parser
