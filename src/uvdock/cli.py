"""The command tree, the global options and the one handler that maps errors to exit codes.

The tree is a table of names -> modules; only the module of the command being run is
imported, which keeps start-up within budget (bench/startup.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

from uvdock import __version__
from uvdock.errors import CommandFailed, InputRefused, UvdockError


class CommandSpec(NamedTuple):
    module: str
    help: str


# (group, name) -> spec. A group's "" entry is what runs when no subcommand is named.
COMMANDS: dict[tuple[str, str], CommandSpec] = {
    ("run", ""): CommandSpec("run", "run any command in the CI container"),
    ("shell", ""): CommandSpec(
        "shell", "interactive shell in the container (docker/podman or srun + pyxis)"
    ),
    ("add", ""): CommandSpec(
        "add", "uv add in the container; prints the lock diff and the commit to make"
    ),
    ("remove", ""): CommandSpec("remove", "uv remove in the container"),
    ("lock", ""): CommandSpec(
        "lock", "uv lock in the container (--check, --upgrade, --upgrade-package)"
    ),
    ("lock", "resolve"): CommandSpec(
        "lock_resolve", "resolve a uv.lock conflict: take REF's lock, relock, stage"
    ),
    ("lock", "diff"): CommandSpec(
        "lock_diff", "packages added / removed / changed between two locks"
    ),
    ("sync", ""): CommandSpec(
        "sync", "uv sync --locked in the container (profiles dev, lint, lts)"
    ),
    ("lts", "show"): CommandSpec("lts_show", "the LTS pin set as a table"),
    ("lts", "check"): CommandSpec("lts_check", "every LTS line is an exact pin, no duplicates"),
    ("lts", "drift"): CommandSpec("lts_drift", "how far the LTS pins lag behind uv.lock"),
    ("lts", "pin"): CommandSpec("lts_pin", "change LTS pins (requires --lts)"),
    ("image", "show"): CommandSpec("image_show", "every base-image pin in the repository"),
    ("image", "check"): CommandSpec("image_check", "do the managed base-image pins agree?"),
    ("image", "bump"): CommandSpec(
        "image_bump", "move the dev (or, with --lts, LTS) pins to a new tag"
    ),
    ("image", "build"): CommandSpec("image_build", "build the CI image (--target main)"),
    ("image", "pull"): CommandSpec("image_pull", "pull the CI image from the GitLab registry"),
    ("image", "enroot"): CommandSpec("image_enroot", "import the CI image for enroot / pyxis"),
    ("recipe", "show"): CommandSpec("recipe_show", "every place a test case runs"),
    ("recipe", "mark-broken"): CommandSpec(
        "recipe_mark_broken", "move a test case's scopes to -broken"
    ),
    ("recipe", "unmark"): CommandSpec("recipe_unmark", "undo a mark-broken made by uvdock"),
    ("doctor", ""): CommandSpec(
        "doctor", "check the setup, or read a failure log and name the fix"
    ),
    ("merge-driver", "install"): CommandSpec(
        "merge_driver", "register a git merge driver for uv.lock"
    ),
}

ENGINE_CHOICES = ("auto", "docker", "podman", "srun", "local")


def _groups() -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for group, name in COMMANDS:
        groups.setdefault(group, []).append(name)
    return groups


GLOBAL_VALUES = {
    "--repo": "repo",
    "--engine": "engine",
    "--container": "container",
    "--image": "image",
}
GLOBAL_FLAGS = {
    "--dry-run": "dry_run",
    "--json": "json",
    "-v": "verbose",
    "--verbose": "verbose",
    "-q": "quiet",
    "--quiet": "quiet",
    "--version": "version",
}


def scan_global_options(words: Sequence[str]) -> tuple[dict[str, Any], list[str]] | None:
    """The global options at the front of `words`, and the words after them.

    Building argparse parsers costs more than `uvdock run` may spend in total, so the
    common case is read by hand. Anything unusual (help, an unknown option, a missing
    value, an invalid engine) returns None: argparse then decides, with its own messages.
    """
    found: dict[str, Any] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--" or word == "-" or not word.startswith("-"):
            return found, list(words[index:])
        if word in GLOBAL_FLAGS:
            found[GLOBAL_FLAGS[word]] = True
            index += 1
            continue
        name, has_value, value = word.partition("=")
        if name not in GLOBAL_VALUES:
            return None
        if not has_value:
            if index + 1 >= len(words):
                return None
            value = words[index + 1]
            index += 1
        if name == "--engine" and value not in ENGINE_CHOICES:
            return None
        found[GLOBAL_VALUES[name]] = value
        index += 1
    return found, []


def _split_command(command: str | None, rest: list[str]) -> tuple[tuple[str, str], list[str]]:
    groups = _groups()
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
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="uvdock-crash-", suffix=".log")
    with os.fdopen(fd, "w") as fh:
        fh.write(f"uvdock {__version__} {' '.join(sys.argv)}\n")
        traceback.print_exception(exc, file=fh)
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

    from uvdock.context import Context, GlobalOptions
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
        if (
            isinstance(exc, CommandFailed)
            and exc.stderr.strip()
            and not getattr(exc, "shown", False)
        ):
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
