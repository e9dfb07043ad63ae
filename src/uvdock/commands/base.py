"""What every command module provides: a class named Command deriving from this one."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from uvdock.context import Context


class Command:
    """A command's one-line help lives in cli/spec.py's COMMANDS, so `uvdock --help` imports no
    command."""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """Add this command's own arguments (and its description, when it has one)."""

    def parse(
        self, words: list[str], make_parser: Callable[[], argparse.ArgumentParser]
    ) -> argparse.Namespace:
        """The command's arguments. `make_parser` gives a parser that already knows the
        global options; a command with nothing to parse may skip building it."""
        parser = make_parser()
        self.configure(parser)
        return parser.parse_args(words)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        raise NotImplementedError


class DependencyChange(Command):
    """`add` and `remove`: uv add / remove in the container (run/uv_project.py)."""

    action: str
    helps: tuple[str, str, str]  # PKG, --group, --optional

    def configure(self, parser: argparse.ArgumentParser) -> None:
        packages, in_group, in_extra = self.helps
        parser.add_argument("packages", nargs="+", metavar="PKG", help=packages)
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--group", metavar="G", help=in_group)
        group.add_argument("--optional", metavar="X", help=in_extra)
        sync = "do not bring a running container's environment up to date afterwards"
        add_switches(parser, no_sync=sync)
        add_lock_format_option(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.run.uv_project import change_dependencies

        return change_dependencies(ctx, self.action, args)


def engine_for(ctx: Context) -> str:
    """docker or podman, as configured or as found (see run.probe.pick_engine)."""
    from uvdock.run.probe import pick_engine

    return pick_engine(ctx.config.engine, ctx.env, dry_run=ctx.dry_run, said=ctx.said("engine"))


@contextlib.contextmanager
def writing(ctx: Context, command: str) -> Iterator[None]:
    """What every writing command runs inside: the repository lock (one writer at a time)
    and writes confined to the repository and its git folders."""
    from uvdock.files import edit, repolock
    from uvdock.run import git, ownership

    git_dir = git.git_dir(ctx.repo)
    ownership.require_safe_directory(ctx.repo, ctx.env, git_dir)
    path = repolock.lock_path(git_dir)
    with repolock.held(path, command, ctx.config.lock_timeout) as stale:
        if stale is not None:
            ctx.out.detail(
                f"took over the repository lock left by `{stale.command}` (pid {stale.pid}), "
                "which no longer runs"
            )
        with edit.confined(ctx.repo, git_dir, common_git_dir(git_dir)):
            yield


def common_git_dir(git_dir: Path) -> Path:
    """The git dir every worktree shares (info/attributes lives there): `git_dir` unless linked."""
    from uvdock.files import textlines

    try:
        text = textlines.read_text(git_dir / "commondir", errors="replace").strip()
    except OSError:
        return git_dir
    return (git_dir / text).resolve() if text else git_dir


def add_format_option(parser: argparse.ArgumentParser, *formats: str, help: str) -> None:
    """`--format text|...` for all (here: `image check` imports nothing more); --json wins."""
    parser.add_argument("--format", choices=("text", *formats), default="text", help=help)


def add_switches(parser: argparse._ActionsContainer, **helps: str) -> None:
    """On/off options, in order: `allow_downgrade="..."` is `--allow-downgrade`."""
    for name, text in helps.items():
        parser.add_argument("--" + name.replace("_", "-"), action="store_true", help=text)


def add_lock_format_option(parser: argparse.ArgumentParser) -> None:
    table = "markdown: a table for the pull request (package, change kind, from, to, source)"
    add_format_option(parser, "markdown", help=table)
