"""The command tree, the global options and the one handler that maps errors to exit codes.

The tree is a table of names -> modules; only the module of the command being run is
imported, which keeps start-up within budget (bench/startup.py).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
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


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so the root handler owns exit codes."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise InputRefused(f"{self.prog}: {message}")


def _top_parser() -> argparse.ArgumentParser:
    lines = []
    for (group, name), spec in COMMANDS.items():
        lines.append(f"  {(group + ' ' + name).strip():<22} {spec.help}")
    parser = _Parser(
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


def _split_command(
    parser: argparse.ArgumentParser, command: str | None, rest: list[str]
) -> tuple[tuple[str, str], list[str]]:
    groups = _groups()
    if command is None:
        parser.print_help()
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
    args_list = list(sys.argv[1:] if argv is None else argv)
    top = _top_parser()
    top_args = top.parse_args(args_list)
    key, rest = _split_command(top, top_args.command, top_args.rest)

    spec = COMMANDS[key]
    module = importlib.import_module(f"uvdock.commands.{spec.module}")
    command = module.Command()
    prog = "uvdock " + " ".join(p for p in key if p)
    siblings = [n for g, n in COMMANDS if g == key[0] and n] if not key[1] else []
    epilog = (
        "subcommands:\n"
        + "\n".join(f"  {key[0]} {n:<12} {COMMANDS[(key[0], n)].help}" for n in siblings)
        if siblings
        else None
    )
    sub = _Parser(
        prog=prog,
        description=spec.help,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_global_options(sub, after_command=True)
    command.configure(sub)
    args = sub.parse_args(rest)

    from uvdock.context import Context, GlobalOptions
    from uvdock.output import Output

    merged = {**vars(top_args), **{k: v for k, v in vars(args).items() if k in vars(top_args)}}
    options = GlobalOptions(
        repo=merged["repo"],
        dry_run=merged["dry_run"],
        json=merged["json"],
        verbose=merged["verbose"],
        quiet=merged["quiet"],
        engine=merged["engine"],
        container=merged["container"],
        image=merged["image"],
    )
    out = Output(json_mode=options.json, quiet=options.quiet, verbose=options.verbose)
    ctx = Context(options=options, out=out)
    result: int = command.run(ctx, args)
    return result


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
