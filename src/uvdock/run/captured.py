"""Quick captured git plumbing on the standard library, outside the plumbum door.

`image show`, `lock diff REV` and the pre-commit hook run a handful of short `git` calls
and nothing else; importing plumbum for them would cost more than all those calls (see
docs/design-choices.md, "plumbum only on process paths"). Everything that runs in or
drives a container goes through run.proc instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import CommandFailed
from uvdock.run import signals


class Completed(NamedTuple):
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    check: bool = True,
    input_text: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Completed:
    """Run to completion, capturing stdout and stderr as text."""
    import subprocess

    argv = list(argv)
    try:
        with signals.shielded_spawn() as shield:
            done = subprocess.run(
                argv,
                cwd=cwd,
                input=input_text,
                env=env,
                capture_output=True,
                text=True,
                errors="replace",
                process_group=shield.get("process_group"),
            )
    except FileNotFoundError as exc:
        raise CommandFailed(argv, 127, message=f"`{argv[0]}` was not found on PATH") from exc
    result = Completed(argv, done.returncode, done.stdout, done.stderr)
    if check and not result.ok:
        raise CommandFailed(argv, result.returncode, result.stdout, result.stderr)
    return result


def c_messages(env: Mapping[str, str]) -> dict[str, str]:
    """`env` for a program whose messages uvdock reads: untranslated (LC_ALL=C, and no
    LANGUAGE, which GNU gettext honours over LC_ALL unless the locale is C)."""
    return {**{k: v for k, v in env.items() if k != "LANGUAGE"}, "LC_ALL": "C"}


def run_bytes(argv: Sequence[str], *, cwd: Path | str | None = None) -> bytes:
    """Run to completion and return raw stdout (file contents from git, exact bytes)."""
    import subprocess

    argv = list(argv)
    with signals.shielded_spawn() as shield:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, process_group=shield.get("process_group")
        )
    if done.returncode != 0:
        raise CommandFailed(argv, done.returncode, "", done.stderr.decode(errors="replace"))
    return done.stdout
