"""`uvdock completion bash|zsh|fish`: a shell completion script generated from the command
table (cli/spec.py) and each command's own parser: commands, subcommands, options and their
choices (e.g. the sync profiles). Test case names are asked for at TAB time with the hidden
`uvdock completion SHELL --list-cases`, which only reads the recipe YAMLs and answers with
literal words (completion_words): a name is never evaluated by the shell.
"""

from __future__ import annotations

import argparse
import importlib
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.completion_scripts import CommandShape, Option

if TYPE_CHECKING:
    from uvdock.context import Context

SHELLS = ("bash", "zsh", "fish")
CASE_METAVAR = "CASE"


def _option(action: argparse.Action) -> Option:
    choices = tuple(str(c) for c in action.choices) if action.choices else ()
    takes_value = action.nargs != 0
    return Option(tuple(action.option_strings), action.help or "", takes_value, choices)


def shapes() -> list[CommandShape]:
    """Every command with its own options, read from the parsers the commands build."""
    from uvdock.cli.parse import command_parser
    from uvdock.cli.spec import COMMANDS

    found = []
    for (group, name), spec in COMMANDS.items():
        parser = command_parser((group, name), spec)
        importlib.import_module(f"uvdock.commands.{spec.module}").Command().configure(parser)
        own = [a for a in parser._actions if a not in parser.global_actions]
        options = tuple(_option(a) for a in own if a.option_strings and a.help != argparse.SUPPRESS)
        positional = [a for a in own if not a.option_strings]
        cases = any(a.metavar == CASE_METAVAR for a in positional)
        words = tuple(str(c) for a in positional for c in a.choices or ())
        found.append(CommandShape(group, name, spec.help, options, cases, words))
    return found


def global_options() -> tuple[Option, ...]:
    from uvdock.cli.spec import GLOBAL_OPTIONS

    return tuple(
        Option(o.flags, o.help, o.metavar is not None, o.choices or ()) for o in GLOBAL_OPTIONS
    )


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("shell", nargs="?", choices=SHELLS, help="the shell to complete for")
        parser.add_argument("--list-cases", action="store_true", help=argparse.SUPPRESS)
        # The word typed so far (bash): passed as `--prefix=$cur`, so a leading `-` is a value.
        parser.add_argument("--prefix", default="", help=argparse.SUPPRESS)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        if args.list_cases:
            return _list_cases(ctx, args.shell, args.prefix)
        if args.shell is None:
            from uvdock.errors import InputRefused

            raise InputRefused(
                "name a shell: bash, zsh or fish",
                hint="source <(uvdock completion bash)   # in ~/.bashrc",
            )
        from uvdock.commands import completion_scripts

        script = completion_scripts.SCRIPTS[args.shell](shapes(), global_options())
        _write(ctx, script, {"shell": args.shell, "script": script})
        return 0


def _write(ctx: Context, script: str, document: dict[str, object]) -> None:
    if ctx.options.json:
        ctx.out.json(document)
        return
    ctx.out.stdout.write(script)
    ctx.out.stdout.flush()


def _list_cases(ctx: Context, shell: str | None, typed: str) -> int:
    from uvdock.commands import completion_words
    from uvdock.errors import UvdockError
    from uvdock.recipes import parse

    try:
        names = parse.all_cases(parse.load(ctx.repo, ctx.config.recipes_dir))
    except UvdockError:  # outside a repository there is nothing to offer, and nothing to say
        return 0
    if shell == "fish":
        text = completion_words.fish_replies(names)
    elif shell == "zsh":
        text = completion_words.zsh_replies(names, typed)
    elif shell is not None:
        text = completion_words.bash_replies(names, typed)
    else:  # plain lines, for people and older scripts: quoted like bash, never raw
        text = completion_words.bash_replies(names, "")
    _write(ctx, text, {"cases": names})
    return 0
