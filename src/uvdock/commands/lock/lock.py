"""`uvdock lock [--check] [--upgrade] [--upgrade-package P]...`: uv lock in the container."""

from __future__ import annotations

import argparse

from uvdock.commands.base import Command as BaseCommand
from uvdock.commands.base import add_lock_format_option
from uvdock.context import Context
from uvdock.errors import CheckFailed, CommandFailed, EnvironmentUnusable, InputRefused
from uvdock.run import uv_project as uvwork
from uvdock.run.ci_container import CIContainer

NOT_JUDGED = (
    "the lock was not judged; fix the network or the container's Python, or use --offline "
    "when the cache holds everything"
)


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="fail (exit 1) when uv.lock is out of date"
        )
        parser.add_argument("--upgrade", action="store_true", help="allow every package to move")
        add_lock_format_option(parser)
        parser.add_argument(
            "--upgrade-package", action="append", default=[], metavar="P", help="allow P to move"
        )
        parser.add_argument(
            "--pr-body",
            action="store_true",
            help="with --upgrade / --upgrade-package: print the pull request's title and "
            "Markdown body (label, lock diff table, checklist)",
        )
        parser.add_argument(
            "--branch",
            metavar="NAME",
            help="the branch named in the --pr-body title (default: the checked-out branch)",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        # Checked before uv runs: a refused title must not cost a relock.
        pr = _pr_title(ctx, args) if args.pr_body else None
        shim = CIContainer.of(ctx)
        uv_args = ["lock", *["--check"] * args.check, *["--upgrade"] * args.upgrade]
        uv_args += [word for p in args.upgrade_package for word in ("--upgrade-package", p)]
        uvwork.report_uv(ctx, shim)
        if args.check and not ctx.dry_run:
            return _check(ctx, shim, uv_args)
        before = uvwork.lock_bytes(ctx)
        code = shim.run_uv(uv_args, writes=() if args.check else ("uv.lock",))
        if ctx.dry_run:
            if pr is not None:
                ctx.out.info("dry run: the pull request body is printed after a real relock")
            return 0
        if code != 0:
            raise uvwork.uv_failed(uv_args, code)
        if pr is not None:
            return _pr_body(ctx, before, *pr, uv_args)
        uvwork.show_lock_change(ctx, before, args.format)
        return 0


def _pr_title(ctx: Context, args: argparse.Namespace) -> tuple[str, str]:
    """The branch (--branch, the checked-out one, else the base ref's: CI's detached HEAD)
    and the title naming it."""
    from datetime import UTC, datetime

    from uvdock.lock import pr_body
    from uvdock.run import git

    if args.branch is not None:
        branch = git.checked_ref(args.branch, "--branch")
    else:
        branch = git.current_branch(ctx.repo) or ctx.base_ref.rpartition("/")[2]
    if args.check or not (args.upgrade or args.upgrade_package):
        raise InputRefused(
            "--pr-body describes an upgrade: pass --upgrade or --upgrade-package P",
            hint="uvdock lock --upgrade --pr-body > pr.md",
        )
    date = datetime.now(UTC).date().isoformat()
    return branch, pr_body.title(ctx.config.lock_bump_title, branch, date)


def _pr_body(
    ctx: Context, before: bytes | None, branch: str, title: str, uv_args: list[str]
) -> int:
    """The pull request on stdout; nothing when uv.lock did not move (no PR to open)."""
    from uvdock.lock import lockfile, pr_body

    if (after := uvwork.lock_bytes(ctx)) is None or after == before:
        ctx.out.json({"lock_changed": False, "added": [], "removed": [], "changed": []})
        ctx.out.info("uv.lock unchanged: no pull request to open")
        return 0
    diff = lockfile.diff_locks(before or b"", after)
    upgrade = "uv " + " ".join(uv_args)
    protected = ctx.config.protected_packages
    body = pr_body.render(
        diff, title_text=title, branch=branch, upgrade=upgrade, protected=protected
    )
    if ctx.options.json:
        made = {"title": title, "kinds": pr_body.kinds(diff), "pr_body": body}
        ctx.out.json({"lock_changed": True, **diff.to_json(), **made})
        return 0
    ctx.out.info(f"uv.lock changed on {branch}: {pr_body.summary(diff)}")
    ctx.out.document_text(body.rstrip("\n"))
    return 0


def _check(ctx: Context, shim: CIContainer, uv_args: list[str]) -> int:
    """`uv lock --check`, captured: "out of date" only when uv says the lock needs updating."""
    from uvdock.project import lockcheck

    done = shim.capture(shim.uv_argv(uv_args))
    if done.returncode in (126, 127) and shim.placement.mode != "local":
        raise shim.uv_missing()
    output = done.stdout + "\n" + done.stderr
    result = lockcheck.classify(done.returncode, output)
    lock = ctx.project_file("uv.lock")
    if result.verdict is lockcheck.Verdict.CURRENT:
        ctx.out.info(f"{lock} is up to date")
        return 0
    if result.verdict is lockcheck.Verdict.STALE:
        raise CheckFailed(
            f"{lock} is out of date with {ctx.project_file('pyproject.toml')}",
            hint=f"run `uvdock lock` and commit {lock}",
        )
    tail = lockcheck.last_lines(output)
    if result.verdict is lockcheck.Verdict.ENVIRONMENT:
        raise EnvironmentUnusable(
            f"uv lock --check could not run (exit {done.returncode}): {result.cause}",
            hint=f"uv's last lines:\n{tail}\n{NOT_JUDGED}",
        )
    raise CommandFailed(
        ["uv", *uv_args],
        done.returncode,
        done.stdout,
        tail,
        message=f"uv lock --check failed (exit {done.returncode}) for a reason other than a "
        "stale lock; uv's last lines follow",
    )
