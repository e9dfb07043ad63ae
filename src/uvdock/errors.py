"""The few exception types that reach the root handler, each with its exit code (design.md)."""

from collections.abc import Sequence


class UvdockError(Exception):
    exit_code = 4  # a message for the user; 4 (a bug) unless a subclass says otherwise
    # The command whose arguments were refused, when known before it ran (--json names it).
    command = ""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class CheckFailed(UvdockError):
    exit_code = 1


class InputRefused(UvdockError):
    """Bad argument, invalid tag or spec, missing opt-in: nothing was changed (exit 2)."""

    exit_code = 2


class UsageError(InputRefused):
    """A command line refused: printed as its usage line and one `error:` line."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class EnvironmentUnusable(UvdockError):
    """Not a git repository, no engine, no image or container, no uv in it (exit 3)."""

    exit_code = 3


class Interrupted(UvdockError):
    """The user pressed Ctrl-C; whatever was in flight has been stopped or restored."""

    exit_code = 130


class CommandFailed(UvdockError):
    exit_code = 1  # a process exited non-zero; this carries what explains it

    def __init__(
        self,
        argv: Sequence[str],
        returncode: int,
        stdout: str = "",
        stderr: str = "",
        *,
        message: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.argv, self.returncode = list(argv), returncode
        self.stdout, self.stderr = stdout, stderr
        super().__init__(message or f"{self.argv[0]} exited with status {returncode}", hint=hint)
