"""argparse parsers for uvdock: the top level, each group and each command, with their help
(command options first, the global options once in their own section, examples last) and
their usage errors (the usage line, one `error:` line, a suggestion for a typo).

Imported only when a parser is needed: the common paths are read by
`uvdock.cli.spec.scan_global_options`, which costs nothing to import.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence

from uvdock import __version__
from uvdock.cli.spec import (
    COMMANDS,
    GLOBAL_OPTIONS,
    CommandSpec,
    GlobalOptions,
    command_groups,
)
from uvdock.errors import InputRefused

EXIT_CODES = (
    "exit codes: 0 done, 1 check failed or command failed, 2 input refused, "
    "3 environment unusable, 4 internal error, 130 interrupted"
)


class UsageError(InputRefused):
    """A command line argparse refused: printed as the usage line and one `error:` line."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


def closest(word: str, candidates: Sequence[str]) -> str | None:
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.7)
    return found[0] if found else None


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting (the root handler owns exit codes), keeps the
    global options out of the usage line and ends its help with examples."""

    def __init__(
        self,
        *args: object,
        examples: Sequence[str] = (),
        subcommands: Sequence[str] = (),
        trailer: str = "",
        **kwargs: object,
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.global_actions: list[argparse.Action] = []
        self.examples = tuple(examples)
        self.subcommands = tuple(subcommands)
        self.trailer = trailer

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

    def option_strings(self) -> list[str]:
        return [flag for action in self._actions for flag in action.option_strings]

    def error(self, message: str) -> None:  # type: ignore[override]
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            message = self._unrecognized(message[len(prefix) :].split())
        raise UsageError(message, self.format_usage().strip())

    def _unrecognized(self, words: list[str]) -> str:
        word = words[0]
        if word.startswith("-"):
            similar = closest(word.partition("=")[0], self.option_strings())
            if similar:
                return f"unexpected argument {word}; a similar option exists: {similar}"
            return f"unexpected argument {word}"
        similar = closest(word, self.subcommands)
        if similar:
            command = self.prog.removeprefix("uvdock ")
            return f"unknown command `{command} {word}`; did you mean {similar}?"
        return "unexpected arguments: " + " ".join(words)


def add_global_options(parser: Parser, *, after_command: bool, strict: bool = True) -> None:
    """The global options. After the command the same options are accepted but must not
    reset what was given before; `strict=False` takes any value, or none, for an option."""
    group = parser.add_argument_group("global options")
    for option in GLOBAL_OPTIONS:
        default = argparse.SUPPRESS if after_command else None if option.metavar else False
        if option.metavar:
            action = group.add_argument(
                *option.flags,
                dest=option.dest,
                metavar=None if option.choices and strict else option.metavar,
                choices=option.choices if strict else None,
                nargs=None if strict else "?",
                default=default,
                help=option.help,
            )
        else:
            action = group.add_argument(
                *option.flags,
                dest=option.dest,
                action="store_true",
                default=default,
                help=option.help,
            )
        parser.global_actions.append(action)


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

    lines = []
    for name, text in pairs:
        wrapped = textwrap.wrap(text, max(_width() - column - 3, 20)) or [""]
        lines.append(f"  {name:<{column}} {wrapped[0]}")
        lines += [" " * (column + 3) + more for more in wrapped[1:]]
    return "\n".join(lines)


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
        trailer=_command_table(),
        examples=(
            "uvdock sync",
            "uvdock image bump 26.08-py3",
            "uvdock help image bump",
        ),
        subcommands=list(command_groups()),
    )
    parser.add_argument("--version", action="version", version=f"uvdock {__version__}")
    add_global_options(parser, after_command=False)
    parser.add_argument("command", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def group_usage(group: str) -> str:
    names = [n for n in command_groups()[group] if n]
    default = "" in command_groups()[group]
    choices = "{" + ",".join(names) + "}"
    return (
        f"usage: uvdock {group} {'[' + choices + ']' if default else choices} ... [global options]"
    )


def group_help(group: str) -> str:
    pairs = [
        ((group + " " + n).strip(), COMMANDS[(group, n)].help) for n in command_groups()[group]
    ]
    lines = [group_usage(group), "", "subcommands:", rows(pairs)]
    lines += ["", f"run `uvdock help {group} SUBCOMMAND` for its options and examples"]
    return "\n".join(lines) + "\n"


def command_parser(key: tuple[str, str], spec: CommandSpec) -> Parser:
    group, name = key
    siblings = [n for n in command_groups()[group] if n] if not name else []
    trailer = ""
    if siblings:
        pairs = [(f"{group} {n}", COMMANDS[(group, n)].help) for n in siblings]
        trailer = "subcommands:\n" + rows(pairs)
    parser = Parser(
        prog="uvdock " + " ".join(p for p in key if p),
        description=spec.help,
        trailer=trailer,
        examples=spec.examples,
        subcommands=siblings,
    )
    add_global_options(parser, after_command=True)
    return parser
