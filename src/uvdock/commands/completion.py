"""`uvdock completion bash|zsh|fish`: a script built from each command's own parser; case names
come at TAB time from the hidden `--list-cases`, as literal words (cli/completion.py)."""

from __future__ import annotations

import argparse
import importlib

from uvdock.cli.completion import SCRIPTS, CommandShape, Option, replies
from uvdock.cli.parse import command_parser
from uvdock.cli.spec import COMMANDS, GLOBAL_OPTIONS
from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import InputRefused, UvdockError
from uvdock.recipes import parse

CASE_METAVAR = "CASE"


def shapes() -> list[CommandShape]:
    """Every command with its own options, read from the parsers the commands build."""
    found = []
    for (group, name), spec in COMMANDS.items():
        parser = command_parser((group, name), spec)
        importlib.import_module(f"uvdock.commands.{spec.module}").Command().configure(parser)
        own = [a for a in parser._actions if a not in parser.global_actions]
        options = tuple(
            Option(
                tuple(a.option_strings),
                a.help or "",
                a.nargs != 0,
                tuple(map(str, a.choices or ())),
            )
            for a in own
            if a.option_strings and a.help != argparse.SUPPRESS
        )
        positional = [a for a in own if not a.option_strings]
        cases = any(a.metavar == CASE_METAVAR for a in positional)
        words = tuple(str(c) for a in positional for c in a.choices or ())
        found.append(CommandShape(group, name, spec.help, options, cases, words))
    return found


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("shell", nargs="?", choices=SCRIPTS, help="the shell to complete for")
        parser.add_argument("--list-cases", action="store_true", help=argparse.SUPPRESS)
        parser.add_argument("--prefix", default="", help=argparse.SUPPRESS)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        if args.list_cases:
            try:
                names = parse.all_cases(parse.load(ctx.repo, ctx.config.recipes_dir))
            except UvdockError:  # outside a repository there is nothing to offer, nor to say
                return 0
            text = replies(args.shell, names, args.prefix)
            document: dict[str, object] = {"cases": names}
        elif args.shell is None:
            raise InputRefused(
                "name a shell: bash, zsh or fish",
                hint="source <(uvdock completion bash)   # in ~/.bashrc",
            )
        else:
            globals_ = [
                Option(o.flags, o.help, o.metavar is not None, o.choices or ())
                for o in GLOBAL_OPTIONS
            ]
            text = SCRIPTS[args.shell](shapes(), globals_)
            document = {"shell": args.shell, "script": text}
        if ctx.options.json:
            ctx.out.json(document)
        else:
            ctx.out.stdout.write(text)
            ctx.out.stdout.flush()
        return 0
