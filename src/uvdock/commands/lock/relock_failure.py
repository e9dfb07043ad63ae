"""Why a relock in `lock resolve` failed: the network, or the project.

uv's own words went to the terminal (the relock streams), so they cannot be read back.
Asking uv once more, offline and without writing (`uv lock --check --offline`), tells the
two apart the way `lock --check` does (project.lockcheck): a failure that an offline
resolve gets past (or that names being offline) is the network; one it repeats ("No
solution found") is the project. Asked only after a failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from uvdock.errors import CheckFailed, EnvironmentUnusable, UvdockError

if TYPE_CHECKING:
    from uvdock.run.ci_container import CIContainer

# The words `uvdock lock --check` uses for the same situation.
NETWORK_HINT = (
    "the lock was not judged; fix the network or the container's Python, or use --offline "
    "when the cache holds everything"
)


def relock_failed(
    shim: CIContainer, ref: str, files: str, code: int, lock: str, pyproject: str
) -> UvdockError:
    from uvdock.project import lockcheck

    try:
        probe = shim.capture(shim.uv_argv(["lock", "--check", "--offline"]))
    except UvdockError:  # the question failed to run: say what was said before
        verdict = lockcheck.Verdict.FAILED
    else:
        output = probe.stdout + "\n" + probe.stderr
        verdict = lockcheck.classify(probe.returncode, output).verdict
    again = "then run `uvdock lock resolve` again"
    if verdict is not lockcheck.Verdict.FAILED:
        return EnvironmentUnusable(
            f"`uv lock` failed (exit {code}) on top of {ref}'s {lock} because uv could not "
            f"reach the package index (uv's output is above); {files} and their index "
            "entries are back as they were",
            hint=f"{NETWORK_HINT}; {again}",
        )
    return CheckFailed(
        f"`uv lock` failed (exit {code}) on top of {ref}'s {lock}; "
        f"{files} and their index entries are back as they were",
        hint=f"fix what uv reports above (usually in {pyproject}), {again}",
    )
