"""main(): dispatch from the command table (cli/spec.py) and the one handler that maps
errors to exit codes.

Only the module of the command being run is imported, which keeps start-up within budget
(bench/startup.py).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from uvdock.cli.spec import GlobalOptions
    from uvdock.commands.base import Command as BaseCommand
    from uvdock.context import Context
    from uvdock.ui.output import Output

from uvdock import __version__
from uvdock.cli.spec import COMMANDS, CommandSpec, command_groups, scan_global_options
from uvdock.errors import CommandFailed, UvdockError


def _usage_error(message: str, usage: str) -> Exception:
    from uvdock.cli.parse import UsageError

    return UsageError(message, usage)


def _split_command(
    command: str | None, rest: list[str], given: dict[str, Any]
) -> tuple[tuple[str, str], list[str]]:
    """The command's key and its words. Global options between a group and its subcommand
    (`uvdock image --json check`) are moved into `given`."""
    groups = command_groups()
    if command is None:
        from uvdock.cli.parse import top_parser

        top_parser().print_help()
        raise SystemExit(2)
    if command not in groups:
        import difflib

        close = difflib.get_close_matches(command, [*groups, "help"], n=1)
        # `uvdock bump`: the word is a subcommand of a group (`image bump`).
        owners = [f"{group} {command}" for group, names in groups.items() if command in names]
        if owners:
            close = [" or ".join(f"`uvdock {owner}`" for owner in owners)]
        hint = f"; did you mean {close[0]}?" if close else "; see `uvdock --help`"
        raise _usage_error(
            f"unknown command `{command}`{hint}", "usage: uvdock [global options] COMMAND ..."
        )
    names = groups[command]
    front = scan_global_options(rest) if rest[:1] != ["--"] else None
    if front is not None and front[1][:1] and front[1][0] in names and front[1][0]:
        given.update(front[0])
        return (command, front[1][0]), front[1][1:]
    if "" in names:
        return (command, ""), rest
    if front is None and rest[:1] and rest[0].startswith("-") and rest[0] not in ("-h", "--help"):
        return _group_with_options(command, names, rest, given)
    if front is not None:
        given.update(front[0])
        rest = front[1]
    return (command, _subcommand(command, names, rest)), rest[1:]


def _group_with_options(
    group: str, names: list[str], rest: list[str], given: dict[str, Any]
) -> tuple[tuple[str, str], list[str]]:
    """Options the scanner does not read before a subcommand: argparse reads them, or names
    the problem (with a suggestion)."""
    import argparse

    from uvdock.cli import parse as cli_parse

    parser = cli_parse.command_parser((group, ""), COMMANDS[(group, names[0])])
    parser.prog, parser.usage = f"uvdock {group}", cli_parse.group_usage(group)[len("usage: ") :]
    parser.subcommands = tuple(names)
    parser.add_argument("subcommand")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    parsed = vars(parser.parse_args(rest))
    words = [parsed.pop("subcommand"), *parsed.pop("rest")]
    given.update(parsed)
    return (group, _subcommand(group, names, words)), words[1:]


def _subcommand(group: str, names: list[str], rest: list[str]) -> str:
    from uvdock.cli import parse as cli_parse

    wanted = rest[0] if rest else ""
    if wanted in names:
        return wanted
    if wanted in ("-h", "--help"):
        sys.stdout.write(cli_parse.group_help(group))
        raise SystemExit(0)
    if not wanted:
        sys.stderr.write(cli_parse.group_help(group))
        raise SystemExit(2)
    similar = cli_parse.closest(wanted, names)
    hint = f"did you mean {similar}?" if similar else f"choose from {', '.join(names)}"
    raise cli_parse.UsageError(
        f"unknown command `{group} {wanted}`; {hint}", cli_parse.group_usage(group)
    )


def _help_words(words: list[str]) -> list[str]:
    """`uvdock help CMD [SUB]` is `uvdock CMD [SUB] --help`."""
    return [*words[1:3], "--help"] if len(words) > 1 else ["--help"]


def _crash_log(exc: BaseException) -> Path:
    import os
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
    from pathlib import Path

    return Path(path)


class Invocation(NamedTuple):
    """A command line read completely: what runs, its own arguments and the global options."""

    key: tuple[str, str]
    command: BaseCommand
    args: argparse.Namespace
    options: GlobalOptions


def parse(words: list[str]) -> Invocation:
    """Read a command line; --help prints and raises SystemExit, a bad one raises UsageError."""
    scanned = scan_global_options(words)
    if scanned is not None and scanned[1][:1] == ["help"]:
        return parse([*words[: len(words) - len(scanned[1])], *_help_words(scanned[1])])
    if scanned is None or not scanned[1]:
        from uvdock.cli.parse import top_parser

        top_args = top_parser().parse_args(words)
        given = {k: v for k, v in vars(top_args).items() if k not in ("command", "rest")}
        if top_args.command == "help":
            return parse(_help_words([top_args.command, *top_args.rest]))
        key, rest = _split_command(top_args.command, top_args.rest, given)
    else:
        given, remaining = scanned
        key, rest = _split_command(remaining[0], remaining[1:], given)

    spec = COMMANDS[key]
    command: BaseCommand = importlib.import_module(f"uvdock.commands.{spec.module}").Command()
    try:
        args = _defaults(command) if not rest else None
        if args is None:
            args = command.parse(rest, lambda: _command_parser(key, spec))
    except UvdockError as exc:
        exc.command = " ".join(part for part in key if part)  # for the --json error document
        raise

    from uvdock.cli.spec import GlobalOptions

    after = {name: getattr(args, name) for name in GlobalOptions._fields if hasattr(args, name)}
    options = GlobalOptions(**{**{k: v for k, v in given.items() if v is not None}, **after})
    if options.quiet and options.verbose:
        refused = _usage_error(
            "-q/--quiet and -v/--verbose cannot be used together",
            f"usage: uvdock [global options] {' '.join(p for p in key if p)} ...",
        )
        refused.command = " ".join(part for part in key if part)  # type: ignore[attr-defined]
        raise refused
    return Invocation(key, command, args, options)


class Session:
    """What the root handler needs to know about the invocation in flight: its Output (the
    --json document is written there, once) and its name and context."""

    out: Output | None = None
    name: str = ""
    ctx: Context | None = None


def run(argv: Sequence[str] | None = None, session: Session | None = None) -> int:
    session = session or Session()
    words = list(sys.argv[1:] if argv is None else argv)
    scanned = scan_global_options(words)
    if scanned is not None and scanned[0].get("version"):
        print(f"uvdock {__version__}")
        return 0
    invocation = parse(words)

    from uvdock.context import Context
    from uvdock.ui.output import Output

    options = invocation.options
    out = Output(
        json_mode=options.json,
        quiet=options.quiet,
        verbose=options.verbose,
        color=options.color or "auto",
        document_on_stdout=_document_on_stdout(invocation.args),
    )
    ctx = Context(options=options, out=out)
    key, command, args = invocation.key, invocation.command, invocation.args
    session.out, session.ctx = out, ctx
    session.name = " ".join(part for part in key if part)
    with _json_stdout(options.json, out):
        if COMMANDS[key].writes and not options.dry_run:
            from uvdock.commands.base import writing

            with writing(ctx, " ".join(("uvdock", *key)).strip()):
                code = int(command.run(ctx, args))
        else:
            code = int(command.run(ctx, args))
    if options.json:
        return _json_document(session, code)
    return code


def _document_on_stdout(args: argparse.Namespace) -> bool:
    """A command asked for a document on stdout: `--format markdown|github|gitlab`, `--pr-body`."""
    return getattr(args, "format", "text") != "text" or bool(getattr(args, "pr_body", False))


def _json_stdout(json_mode: bool, out: Output) -> contextlib.AbstractContextManager[None]:
    """Under --json, stdout is kept for the document (see output.stdout_kept_for_json)."""
    if not json_mode:
        return contextlib.nullcontext()
    from uvdock.ui.output import stdout_kept_for_json

    return stdout_kept_for_json(out.stdout)


def _json_document(session: Session, code: int, error: UvdockError | None = None) -> int:
    """The one --json document of this invocation (see docs/json.md); `code`, or 3 with one
    line on stderr when stdout cannot take it (a full disk, closed, a reader gone away)."""
    from uvdock.ui.output import Output

    out = session.out if session.out is not None and session.out.json_mode else Output()
    ctx = session.ctx
    root = ctx.__dict__.get("repo") if ctx is not None else None
    detail = None
    if error is not None:
        detail = {"message": error.message, "hint": error.hint}
    try:
        if out.stdout is None:  # fd 1 was closed when uvdock started
            raise OSError("stdout is closed")
        out.document(
            session.name or (error.command if error is not None else ""),
            code,
            dry_run=bool(ctx is not None and ctx.dry_run),
            root=root,
            error=detail,
        )
    except (OSError, ValueError) as exc:  # ValueError: a stream closed under us
        _stdout_to_devnull()  # what is still buffered must not fail again at exit
        reason = getattr(exc, "strerror", None) or str(exc)
        Output(stdout=sys.stderr).error(f"cannot write the --json document to stdout: {reason}")
        return 3
    return code


def _stdout_to_devnull() -> None:
    import os

    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _given(argv: Sequence[str] | None, session: Session) -> GlobalOptions:
    """The global options of this invocation, also when it failed before they were read."""
    if session.ctx is not None:
        return session.ctx.options
    from uvdock.cli.parse import global_options

    return global_options(sys.argv[1:] if argv is None else argv)


class _Unusual(Exception):
    pass


_IMPLIED = {"store": None, "append": None, "count": None, "store_true": False}


class _Defaults:
    """Stands in for a command's parser when it is given no words: its options' defaults,
    read without argparse, whose import and set-up cost more than `image check` may spend.
    Anything argparse would have to judge (a positional, a required option, a type) is
    left to argparse."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def add_argument(self, *flags: str, **how: Any) -> None:
        action = how.get("action", "store")
        if not flags[0].startswith("-") or how.get("required") or "type" in how:
            raise _Unusual
        if action not in _IMPLIED:
            raise _Unusual
        dest = how.get("dest") or next((f for f in flags if f.startswith("--")), flags[0]).lstrip(
            "-"
        ).replace("-", "_")
        default = how.get("default", _IMPLIED[action])
        if default != "==SUPPRESS==":
            self.values[dest] = default

    def add_mutually_exclusive_group(self, required: bool = False) -> _Defaults:
        if required:
            raise _Unusual
        return self

    def parse_args(self, words: list[str]) -> argparse.Namespace:
        from types import SimpleNamespace

        return cast("argparse.Namespace", SimpleNamespace(**self.values))


def _defaults(command: BaseCommand) -> argparse.Namespace | None:
    try:
        return command.parse([], lambda: cast("argparse.ArgumentParser", _Defaults()))
    except _Unusual:
        return None


def _command_parser(key: tuple[str, str], spec: CommandSpec) -> argparse.ArgumentParser:
    from uvdock.cli.parse import command_parser

    return command_parser(key, spec)


def main(argv: Sequence[str] | None = None) -> int:
    session = Session()
    try:
        return run(argv, session)
    except UvdockError as exc:
        return _refused(argv, session, exc)
    except SystemExit as exc:
        # --help (0) prints help; a bare `uvdock` or group (2) prints it to stderr as usage.
        code = exc.code if isinstance(exc.code, int) else 2
        if code != 0 and _given(argv, session).json:
            refused = UvdockError("no command given; see `uvdock --help`")
            _json_document(session, code, refused)
        raise
    except KeyboardInterrupt:
        return _failed(argv, session, 130, "interrupted")
    except BrokenPipeError:
        _stdout_to_devnull()  # no second failure when Python flushes stdout at exit
        return 1
    except OSError as exc:  # disk full, permission denied, read-only: the environment's
        where = f"{exc.filename}: " if exc.filename else ""
        return _failed(argv, session, 3, f"{where}{exc.strerror or exc}")
    except Exception as exc:  # a bug: one line to the user, the traceback to a file
        path = _crash_log(exc)
        message = f"internal error: {exc.__class__.__name__}: {exc} (traceback in {path})"
        return _failed(argv, session, 4, message)


def _refused(argv: Sequence[str] | None, session: Session, exc: UvdockError) -> int:
    """An error uvdock raised on purpose: usage, message, hint, the failed command's stderr."""
    from uvdock.ui.output import Output

    out = Output(color=_given(argv, session).color or "auto")
    usage = getattr(exc, "usage", None)
    if usage:
        out.usage(usage)
    out.error(exc.message)
    if exc.hint:
        out.hint(exc.hint)
    if isinstance(exc, CommandFailed) and exc.stderr.strip():
        tail = "\n".join(exc.stderr.strip().splitlines()[-20:])
        Output(stdout=sys.stderr).info(tail)
    if _given(argv, session).json:
        return _json_document(session, exc.exit_code, exc)
    return exc.exit_code


def _failed(argv: Sequence[str] | None, session: Session, code: int, message: str) -> int:
    """An interrupt, an OS failure or a bug: one line (and the --json document), then `code`."""
    from uvdock.ui.output import Output

    given = _given(argv, session)
    Output(color=given.color or "auto").error(message)
    if given.json:
        return _json_document(session, code, UvdockError(message))
    return code
