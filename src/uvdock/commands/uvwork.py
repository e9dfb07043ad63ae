"""Steps shared by the commands that run uv on the project: add, remove, lock, sync."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from uvdock.context import Context
from uvdock.errors import CommandFailed, Interrupted
from uvdock.files import textlines
from uvdock.run.ci_container import CIContainer


def report_uv(ctx: Context, shim: CIContainer) -> None:
    """Say which uv runs, and warn when it differs from what is expected. In a run container
    the question rides along with the first uv run (one container start, not two)."""
    if ctx.dry_run:
        return
    if shim.placement.mode == "run":
        shim.on_uv_version = lambda answer: _uv_said(ctx, shim, answer)
        return
    out = shim.capture(["uv", "--version"])
    if out.returncode in (126, 127):
        raise shim.uv_missing()
    _uv_said(ctx, shim, out.stdout if out.ok else "")


def _uv_said(ctx: Context, shim: CIContainer, answer: str) -> None:
    from uvdock.project import pyproject, uvversion

    container = uvversion.parse(answer)
    if container is None:
        return
    ctx.out.info(f"uv {container}, {shim.placement.describe()}")
    required = pyproject.required_uv_version(ctx.project)
    for problem in uvversion.mismatches(container, required, host_uv_version(ctx.env)):
        ctx.out.warn(problem)


def host_uv_version(env: Mapping[str, str]) -> str | None:
    """The version of the uv on the host's PATH, or None when there is none."""
    from uvdock.project import uvversion
    from uvdock.run import proc

    if proc.which("uv", env) is None:
        return None
    out = proc.run(["uv", "--version"], env=env, check=False)
    return uvversion.parse(out.stdout) if out.ok else None


def lock_bytes(ctx: Context) -> bytes | None:
    try:
        return textlines.read_bytes(ctx.project / "uv.lock", textlines.LOCK_LIMIT)
    except OSError:
        return None


def show_lock_change(ctx: Context, before: bytes | None, fmt: str = "text") -> None:
    """What the run changed in uv.lock, as a lock diff."""
    after = lock_bytes(ctx)
    if after is None or after == before:
        if ctx.options.json:
            ctx.out.json({"lock_changed": False, "added": [], "removed": [], "changed": []})
        else:
            ctx.out.info(f"{ctx.project_file('uv.lock')} unchanged")
        return
    if ctx.options.json:
        ctx.out.json({"lock_changed": True})
    from uvdock.commands.lock import diff_view as lockdiff_view
    from uvdock.lock import lockfile

    try:
        diff = lockfile.diff_locks(before or b"", after)  # no lock before: everything is added
        title = f"{ctx.project_file('uv.lock')} changes"
        lockdiff_view.show_lock_diff(ctx.out, diff, title=title, fmt=fmt)
    except KeyboardInterrupt:  # uv has finished: say what it left, not a bare "interrupted"
        raise Interrupted(
            "interrupted while showing the lock diff; uv.lock was changed by uv "
            "(see `git diff uv.lock`)"
        ) from None


def uv_failed(uv_args: Sequence[str], code: int) -> CommandFailed:
    """`uv X` exited non-zero in the container; uv has already said why on the terminal."""
    return CommandFailed(
        ["uv", *uv_args],
        code,
        message=f"uv {uv_args[0]} failed (exit {code}); uv's output is above",
    )
