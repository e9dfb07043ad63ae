"""Run an engine or enroot step with the terminal attached; a non-zero exit is CommandFailed.

No spinner of ours on top: the child writes its own progress display (BuildKit, buildah,
a pull's layer bars) straight to the terminal, and a redrawn status line would garble it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from uvdock.errors import CommandFailed

if TYPE_CHECKING:
    from uvdock.commands.context import Context


def stream(ctx: Context, argv: Sequence[str], *, hint: str | None = None) -> None:
    """Run `argv` in the repository; exit non-zero -> CommandFailed naming the step, with `hint`."""
    from uvdock.run import proc

    ctx.out.detail("+ " + " ".join(argv))
    code = proc.run_foreground(argv, cwd=ctx.repo, env=ctx.env)
    if code != 0:
        step = " ".join(argv[:2])  # "docker build", "podman pull", "enroot import"
        raise CommandFailed(argv, code, message=f"{step} exited with status {code}", hint=hint)
