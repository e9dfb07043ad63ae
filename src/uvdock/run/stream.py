"""An engine or enroot step with the terminal attached. No spinner of ours on top: the child
draws its own progress (BuildKit, buildah, a pull's layer bars), which a status line would garble.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from uvdock.errors import CommandFailed, EnvironmentUnusable

if TYPE_CHECKING:
    from uvdock.context import Context


def stream(ctx: Context, argv: Sequence[str], *, hint: str | None = None) -> None:
    """Run `argv` in the repository: a non-zero exit is CommandFailed naming the step, or
    exit 3 when the engine's daemon does not answer at all."""
    from uvdock.run import proc

    ctx.out.detail("+ " + " ".join(argv))
    code = proc.run_foreground(argv, cwd=ctx.repo, env=ctx.env)
    if code == 0:
        return
    step = " ".join(argv[:2])  # "docker build", "podman pull", "enroot import"
    if argv[0] in ("docker", "podman"):
        # Why the engine cannot reach its daemon, asked only after a failure, so a working
        # build or pull pays nothing for it.
        from uvdock.run import probe

        version = [argv[0], "version", "--format", "{{.Server.Version}}"]
        answer = proc.ask(version, ctx.env)  # a timeout (exit -1) is no answer either
        if answer.returncode == -1 or probe.unreachable(answer):  # else the step's failure stands
            raise EnvironmentUnusable(
                f"{step} failed: the {argv[0]} daemon is not reachable ({answer.said})",
                hint="start it, or point DOCKER_HOST at a running one; `uvdock doctor` checks",
            )
    raise CommandFailed(argv, code, message=f"{step} exited with status {code}", hint=hint)
