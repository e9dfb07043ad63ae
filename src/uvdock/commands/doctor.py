"""`uvdock doctor [LOG | -]`: check the setup, or read a failure log and name cause and fix."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from uvdock.commands import base
from uvdock.context import Context
from uvdock.doctor.checks import run_checks
from uvdock.doctor.logscan import diagnose_stream
from uvdock.doctor.signatures import SIGNATURES
from uvdock.errors import EnvironmentUnusable, InputRefused, UvdockError
from uvdock.project import declared
from uvdock.run import git, slurm_containers, slurm_steps

if TYPE_CHECKING:
    from uvdock.doctor.checks import CheckResult

_MARKS = {"pass": "ok  ", "fail": "FAIL", "warn": "warn", "skip": "skip"}
_OPEN_ERRORS = {
    FileNotFoundError: "no such file",
    IsADirectoryError: "is a directory, not a log file",
}


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "Without LOG: check the setup (git, engine, image, mounts, uv and its "
            "required-version, the venv, pins, uv.lock, cache disk space, the LTS file); "
            "exit 1 when a check fails. With LOG (a file, or - for stdin): name the cause "
            "and fix of each known failure in it; exit 0 when a cause was named, exit 1 "
            "(showing the lines that look like errors) when none was recognised."
        )
        parser.add_argument(
            "log", nargs="?", metavar="LOG", help="a failure log to diagnose, or - for stdin"
        )
        base.add_switches(
            parser, prune="remove the unpacked containers the srun engine kept (pyxis_uvdock-*)"
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        if args.prune:
            return _prune(ctx)
        if args.log is not None:
            return _diagnose_log(ctx, args.log)
        if ctx.options.json:
            results = run_checks(ctx)
            ctx.out.json({"checks": [r.to_json() for r in results]})
        else:  # one line per check as it finishes: a container check can take a minute
            results = run_checks(ctx, on_result=lambda result: _show_check(ctx, result))
            failed = sum(r.status == "fail" for r in results)
            ctx.out.info(f"{failed} check(s) failed" if failed else "all checks passed")
        return 1 if any(r.status == "fail" for r in results) else 0


@contextlib.contextmanager
def _open_log(source: str) -> Iterator[BinaryIO]:
    """The log as bytes, read as it streams: a log of any size is never held whole."""
    if source == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        yield buffer if buffer is not None else io.BytesIO(sys.stdin.read().encode())
        return
    path = Path(source)
    try:
        stream = path.open("rb")
    except OSError as exc:
        why = _OPEN_ERRORS.get(type(exc), f"cannot read it ({exc.strerror})")
        raise InputRefused(f"{source}: {why}") from None
    with stream:
        yield stream


def _diagnose_log(ctx: Context, source: str) -> int:
    try:  # the project's declarations, when doctor runs in one (a log can be read anywhere)
        repo: Path | None = ctx.repo
    except UvdockError:
        repo = None
    with _open_log(source) as stream:
        try:
            diagnosis = diagnose_stream(stream, SIGNATURES, declared.read(repo) if repo else {})
        except OSError as exc:
            raise InputRefused(f"{source}: cannot read it ({exc.strerror})") from None
    if ctx.options.json:
        lines = [{"line_number": n, "line": t} for n, t in diagnosis.error_lines]
        ctx.out.json({"findings": [f.to_json() for f in diagnosis.findings], "error_lines": lines})
        return 0 if diagnosis.findings else 1
    for finding in diagnosis.findings:
        ctx.out.info(f"line {finding.line_number}: {finding.line}")
        shown = {"cause": finding.cause, "fix": finding.fix, "run": finding.command}
        for label, text in shown.items():
            ctx.out.info(f"  {label + ':':<8} {text}")
    if diagnosis.findings:
        return 0
    ctx.out.warn("no known failure signature in this log")
    none = "no line looks like an error either"
    ctx.out.info("lines that look like errors:" if diagnosis.error_lines else none)
    for number, line in diagnosis.error_lines:
        ctx.out.info(f"  {number}: {line}")
    return 1


def _show_check(ctx: Context, result: CheckResult) -> None:
    took = f" ({result.seconds:.1f} s)"
    ctx.out.info(f"[{_MARKS[result.status]}] {result.name}: {result.detail}{took}")
    if result.fix and result.status in ("fail", "warn"):
        ctx.out.info(f"       fix: {result.fix}")


def _prune(ctx: Context) -> int:
    """Remove the srun engine's unpacked containers on each node of the allocation (else of
    the partition) that lists them, and forget them there: the next step unpacks afresh."""
    if ctx.config.engine != "srun":
        ctx.out.info("nothing to prune: only --engine srun keeps unpacked containers")
        return 0
    extra = ctx.config.engine_args
    listed = slurm_containers.list_containers(
        ctx.env, extra, slurm_steps.doctor_nodes(ctx.env, extra)
    )
    verb = "would remove" if ctx.dry_run else "removed"
    problems: list[str] = []
    for node, names in listed.items():
        if not ctx.dry_run:
            problem = slurm_containers.remove_containers(ctx.env, extra, node, names)
            if problem:
                problems.append(problem)
                continue
            slurm_containers.forget(git.git_dir(ctx.repo), [node])
        for name in names:
            ctx.out.info(f"{node}: {verb} {name}")
    if problems:
        raise EnvironmentUnusable("; ".join(problems))
    if not ctx.dry_run:
        count = sum(len(names) for names in listed.values())
        ctx.out.info(f"{count} unpacked container(s) removed on {', '.join(listed) or 'no node'}")
    return 0
