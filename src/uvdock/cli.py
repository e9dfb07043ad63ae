"""main(): dispatch from the command table (cli_spec.py) and the one handler that maps
errors to exit codes.

Only the module of the command being run is imported, which keeps start-up within budget
(bench/startup.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

from uvdock import __version__
from uvdock.cli_spec import COMMANDS, CommandSpec, command_groups, scan_global_options
from uvdock.errors import CommandFailed, InputRefused, UvdockError


def _split_command(command: str | None, rest: list[str]) -> tuple[tuple[str, str], list[str]]:
    groups = command_groups()
    if command is None:
        from uvdock.cliparse import top_parser

        top_parser().print_help()
        raise SystemExit(2)
    if command not in groups:
        import difflib

        close = difflib.get_close_matches(command, list(groups), n=3)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise InputRefused(f"unknown command `{command}`{hint}; see `uvdock --help`")
    names = groups[command]
    if rest and rest[0] in names and rest[0] != "":
        return (command, rest[0]), rest[1:]
    if "" in names:
        return (command, ""), rest
    wanted = rest[0] if rest else ""
    if wanted in ("-h", "--help", ""):
        choices = ", ".join(n for n in names if n)
        print(f"usage: uvdock {command} {{{choices}}} ...")
        for name in names:
            print(f"  {name:<14} {COMMANDS[(command, name)].help}")
        raise SystemExit(0 if wanted else 2)
    raise InputRefused(f"unknown command `{command} {wanted}`; choose from {', '.join(names)}")


def _crash_log(exc: BaseException) -> Path:
    import os
    import shlex
    import tempfile
    import traceback

    from uvdock.redact import Redactor

    # Secrets given on the command line (`-H 'Authorization: ...'`, `--password X`) or carried
    # by the exception's message stay out of a file that users attach to bug reports.
    redactor = Redactor()
    command = shlex.join(redactor.argv(sys.argv))
    trace = "".join(traceback.format_exception(exc))
    fd, path = tempfile.mkstemp(prefix="uvdock-crash-", suffix=".log")
    with os.fdopen(fd, "w") as fh:
        fh.write(f"uvdock {__version__} {command}\n{redactor.text(trace)}")
    from pathlib import Path

    return Path(path)


def run(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    scanned = scan_global_options(words)
    if scanned is not None and scanned[0].pop("version", False):
        print(f"uvdock {__version__}")
        return 0
    if scanned is None or not scanned[1]:
        from uvdock.cliparse import top_parser

        top = top_parser()
        top_args = top.parse_args(words)
        given = {k: v for k, v in vars(top_args).items() if k not in ("command", "rest")}
        key, rest = _split_command(top_args.command, top_args.rest)
    else:
        given, remaining = scanned
        key, rest = _split_command(remaining[0], remaining[1:])

    spec = COMMANDS[key]
    module = importlib.import_module(f"uvdock.commands.{spec.module}")
    command = module.Command()
    args = command.parse(rest, lambda: _command_parser(key, spec))

    from uvdock.cli_spec import GlobalOptions
    from uvdock.commands.context import Context
    from uvdock.output import Output

    after = {name: getattr(args, name) for name in GlobalOptions._fields if hasattr(args, name)}
    options = GlobalOptions(**{**{k: v for k, v in given.items() if v is not None}, **after})
    out = Output(json_mode=options.json, quiet=options.quiet, verbose=options.verbose)
    ctx = Context(options=options, out=out)
    result: int = command.run(ctx, args)
    return result


def _command_parser(key: tuple[str, str], spec: CommandSpec) -> argparse.ArgumentParser:
    from uvdock.cliparse import command_parser

    return command_parser(key, spec)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(argv)
    except UvdockError as exc:
        from uvdock.output import Output

        out = Output()
        out.error(exc.message)
        if exc.hint:
            out.hint(exc.hint)
        if isinstance(exc, CommandFailed) and exc.stderr.strip():
            tail = "\n".join(exc.stderr.strip().splitlines()[-20:])
            Output(stdout=sys.stderr).info(tail)
        return exc.exit_code
    except KeyboardInterrupt:
        from uvdock.output import Output

        Output().error("interrupted")
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # a bug: one line to the user, the traceback to a file
        from uvdock.output import Output

        path = _crash_log(exc)
        Output().error(f"internal error: {exc.__class__.__name__}: {exc} (traceback in {path})")
        return 4
