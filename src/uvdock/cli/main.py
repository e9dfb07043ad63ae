"""main(): dispatch from the command table (cli/spec.py) and the one handler that maps
errors to exit codes. Only the module of the command being run is imported, and argparse
only when a command line needs it: start-up is budgeted (bench/startup.py)."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

if TYPE_CHECKING:
    import argparse

    from uvdock.commands.base import Command as BaseCommand
    from uvdock.context import Context

from uvdock import __version__
from uvdock.cli.spec import COMMANDS, GlobalOptions, command_groups, scan_global_options
from uvdock.errors import CommandFailed, EnvironmentUnusable, Interrupted, UsageError, UvdockError

TOP_USAGE = "usage: uvdock [global options] COMMAND ..."


def _split_command(
    command: str, rest: list[str], given: dict[str, Any]
) -> tuple[tuple[str, str], list[str]]:
    """The command's key and its words. Global options between a group and its subcommand
    (`uvdock image --json check`) are moved into `given`."""
    groups = command_groups()
    names = groups.get(command)
    front = scan_global_options(rest) if names and rest[:1] != ["--"] else None
    if names and front is not None and front[1][:1] and front[1][0] in names and front[1][0]:
        given.update(front[0])
        return (command, front[1][0]), front[1][1:]
    if names and "" in names:
        return (command, ""), rest
    from uvdock.cli import parse as cli_parse

    if not names:
        # `uvdock bump`: the word is a subcommand of a group (`image bump`).
        owners = [
            f"`uvdock {group} {command}`" for group, words in groups.items() if command in words
        ]
        close = " or ".join(owners) or cli_parse.closest(command, [*groups, "help"], cutoff=0.6)
        hint = f"; did you mean {close}?" if close else "; see `uvdock --help`"
        raise UsageError(f"unknown command `{command}`{hint}", TOP_USAGE)
    if front is None and rest[0] not in ("-h", "--help"):
        # Options the scanner does not read, or `--`: argparse reads them or names the problem.
        import argparse

        parser = cli_parse.command_parser((command, ""), COMMANDS[(command, names[0])])
        parser.usage = cli_parse.group_usage(command).removeprefix("usage: ")
        parser.add_argument("subcommand", nargs="?", default="")
        parser.add_argument("rest", nargs=argparse.REMAINDER)
        parsed = vars(parser.parse_args(rest))
        front = parsed, [parsed.pop("subcommand"), *parsed.pop("rest")]
    if front is not None:
        given.update(front[0])
        rest = front[1]
    wanted = rest[0] if rest else ""
    if wanted in ("-h", "--help") or not wanted:
        (sys.stdout if wanted else sys.stderr).write(cli_parse.group_help(command))
        raise SystemExit(0 if wanted else 2)
    if wanted not in names:
        similar = cli_parse.closest(wanted, names)
        hint = f"did you mean {similar}?" if similar else f"choose from {', '.join(names)}"
        message = f"unknown command `{command} {wanted}`; {hint}"
        raise UsageError(message, cli_parse.group_usage(command))
    return (command, wanted), rest[1:]


class Invocation(NamedTuple):
    key: tuple[str, str]
    command: BaseCommand
    args: argparse.Namespace
    options: GlobalOptions


def parse(words: list[str]) -> Invocation:
    """Read a command line; --help prints and raises SystemExit, a bad one raises UsageError."""
    scanned = scan_global_options(words)
    if scanned is None or not scanned[1]:  # no command, or options the scanner does not read
        from uvdock.cli.parse import top_parser

        parser = top_parser()
        given = vars(parser.parse_args(words))
        command, rest = given.pop("command"), given.pop("rest")
        if command is None:
            parser.print_help()
            raise SystemExit(2)
        scanned = given, [command, *rest]
    given, remaining = scanned
    if remaining[0] == "help":  # `uvdock help CMD [SUB]` is `uvdock CMD [SUB] --help`
        return parse([*words[: len(words) - len(remaining)], *remaining[1:3], "--help"])
    key, rest = _split_command(remaining[0], remaining[1:], given)

    name = " ".join(part for part in key if part)
    command_ = cast(
        "BaseCommand", importlib.import_module(f"uvdock.commands.{COMMANDS[key].module}").Command()
    )
    try:
        args = _defaults(command_) if not rest else None
        if args is None:
            from uvdock.cli.parse import command_parser

            args = command_.parse(rest, lambda: command_parser(key, COMMANDS[key]))
        after = {k: getattr(args, k) for k in GlobalOptions._fields if hasattr(args, k)}
        options = GlobalOptions(**{**{k: v for k, v in given.items() if v is not None}, **after})
        if options.quiet and options.verbose:
            raise UsageError(
                "-q/--quiet and -v/--verbose cannot be used together",
                f"usage: uvdock [global options] {name} ...",
            )
    except UvdockError as exc:
        exc.command = name  # for the --json error document
        raise
    return Invocation(key, command_, args, options)


class _Unusual(Exception):
    pass


_IMPLIED = {"store": None, "append": None, "count": None, "store_true": False}


class _Defaults(dict[str, Any]):
    """Stands in for a command's parser when it is given no words: its options' defaults,
    read without argparse, whose import and set-up cost more than `image check` may spend.
    Anything argparse would have to judge (a positional, a required option, a type) is
    left to argparse."""

    def add_argument(self, *flags: str, **how: Any) -> None:
        action = how.get("action", "store")
        if action not in _IMPLIED or {"required", "type"} & how.keys() or flags[0][0] != "-":
            raise _Unusual
        long = next((f for f in flags if f.startswith("--")), flags[0])
        dest = how.get("dest") or long.lstrip("-").replace("-", "_")
        if how.get("default", _IMPLIED[action]) != "==SUPPRESS==":
            self[dest] = how.get("default", _IMPLIED[action])

    def add_mutually_exclusive_group(self, required: bool = False) -> _Defaults:
        if required:
            raise _Unusual
        return self

    def parse_args(self, words: list[str]) -> argparse.Namespace:
        from types import SimpleNamespace

        return cast("argparse.Namespace", SimpleNamespace(**self))


def _defaults(command: BaseCommand) -> argparse.Namespace | None:
    try:
        return command.parse([], lambda: cast("argparse.ArgumentParser", _Defaults()))
    except _Unusual:
        return None


class Session:
    """The invocation in flight, for the root handler: its name and context (whose Output
    writes the --json document, once)."""

    name: str = ""
    ctx: Context | None = None


def run(words: list[str], session: Session) -> int:
    scanned = scan_global_options(words)
    if scanned is not None and scanned[0].get("version"):
        print(f"uvdock {__version__}")
        return 0
    key, command, args, options = parse(words)

    from uvdock.context import Context
    from uvdock.ui.output import Output

    # A document on stdout (`--format markdown|github|gitlab`, `--pr-body`): info goes to stderr.
    document = getattr(args, "format", "text") != "text" or bool(getattr(args, "pr_body", False))
    out = Output(
        json_mode=options.json,
        quiet=options.quiet,
        verbose=options.verbose,
        color=options.color or "auto",
        document_on_stdout=document,
    )
    session.ctx = ctx = Context(options=options, out=out)
    session.name = " ".join(part for part in key if part)
    with contextlib.ExitStack() as stack:
        if options.json:  # stdout is kept for the document (see output.stdout_kept_for_json)
            from uvdock.ui.output import stdout_kept_for_json

            stack.enter_context(stdout_kept_for_json(out.stdout))
        if COMMANDS[key].writes and not options.dry_run:
            from uvdock.commands.base import writing

            stack.enter_context(writing(ctx, f"uvdock {session.name}"))
        code = int(command.run(ctx, args))
    return _json_document(session, code) if options.json else code


def _json_document(session: Session, code: int, error: UvdockError | None = None) -> int:
    """The one --json document of this invocation (see docs/json.md); `code`, or 3 with one
    line on stderr when stdout cannot take it (a full disk, closed, a reader gone away)."""
    from uvdock.ui.output import Output

    ctx = session.ctx
    out = ctx.out if ctx is not None and ctx.out.json_mode else Output()
    try:
        if out.stdout is None:  # fd 1 was closed when uvdock started
            raise OSError("stdout is closed")
        out.document(
            session.name or (error.command if error is not None else ""),
            code,
            dry_run=bool(ctx is not None and ctx.dry_run),
            root=ctx.__dict__.get("repo") if ctx is not None else None,
            error=None if error is None else {"message": error.message, "hint": error.hint},
        )
    except (OSError, ValueError) as exc:  # ValueError: a stream closed under us
        _stdout_to_devnull()  # what is still buffered must not fail again at exit
        reason = getattr(exc, "strerror", None) or str(exc)
        Output(stdout=sys.stderr).error(f"cannot write the --json document to stdout: {reason}")
        return 3
    return code


def _stdout_to_devnull() -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _given(words: list[str], session: Session) -> GlobalOptions:
    """The global options of this invocation, also when it failed before they were read."""
    if session.ctx is not None:
        return session.ctx.options
    from uvdock.cli.parse import global_options

    return global_options(words)


def main(argv: Sequence[str] | None = None) -> int:
    session, words = Session(), list(sys.argv[1:] if argv is None else argv)
    try:
        return run(words, session)
    except UvdockError as exc:
        return _failed(words, session, exc)
    except SystemExit as exc:
        # --help (0) prints help; a bare `uvdock` or group (2) prints it to stderr as usage.
        code = exc.code if isinstance(exc.code, int) else 2
        if code != 0 and _given(words, session).json:
            _json_document(session, code, UvdockError("no command given; see `uvdock --help`"))
        raise
    except KeyboardInterrupt:
        return _failed(words, session, Interrupted("interrupted"))
    except BrokenPipeError:
        _stdout_to_devnull()  # no second failure when Python flushes stdout at exit
        return 1
    except OSError as exc:  # disk full, permission denied, read-only: the environment's
        where = f"{exc.filename}: " if exc.filename else ""
        return _failed(words, session, EnvironmentUnusable(f"{where}{exc.strerror or exc}"))
    except Exception as exc:  # a bug: one line to the user, the traceback to a file
        name = exc.__class__.__name__
        message = f"internal error: {name}: {exc} (traceback in {_crash_log(exc)})"
        return _failed(words, session, UvdockError(message))


def _failed(words: list[str], session: Session, exc: UvdockError) -> int:
    """One line (after the usage line of a refused command line, before the hint and the tail
    of a failed command's stderr), the --json document when asked for, then its exit code."""
    from uvdock.ui.output import Output

    given = _given(words, session)
    out = Output(color=given.color or "auto")
    if isinstance(exc, UsageError):
        out.usage(exc.usage)
    out.error(exc.message)
    if exc.hint:
        out.hint(exc.hint)
    if isinstance(exc, CommandFailed) and exc.stderr.strip():
        Output(stdout=sys.stderr).info("\n".join(exc.stderr.strip().splitlines()[-20:]))
    return _json_document(session, exc.exit_code, exc) if given.json else exc.exit_code


def _crash_log(exc: BaseException) -> str:
    import shlex
    import tempfile
    import traceback

    from uvdock.ui.redact import Redactor

    # Secrets given on the command line (`-H 'Authorization: ...'`, `--password X`) or carried
    # by the exception's message stay out of a file that users attach to bug reports.
    redactor = Redactor()
    command = shlex.join(redactor.argv(sys.argv))
    trace = "".join(traceback.format_exception(exc))
    fd, path = tempfile.mkstemp(prefix="uvdock-crash-", suffix=".log")
    with os.fdopen(fd, "w") as fh:
        fh.write(f"uvdock {__version__} {command}\n{redactor.text(trace)}")
    return path
