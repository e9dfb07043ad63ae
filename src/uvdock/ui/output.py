"""What the user sees: messages, tables, diffs, JSON and --dry-run command lines.

Everything passes through `redact` first. rich is imported only when a table is drawn, so
commands that print a line or two stay fast: the `error:`, `warning:` and `hint:` labels and
diffs are coloured with plain SGR codes (rich's bold red / yellow / cyan, green and red).

Colour follows `--color auto|always|never`; in auto, NO_COLOR turns it off, FORCE_COLOR on,
and otherwise only a terminal (not a pipe, not TERM=dumb) gets it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from uvdock.ui.redact import Redactor

_SGR = {"error": "1;31", "warning": "1;33", "hint": "1;36", "usage": "1"}
_DIFF_SGR = (("+++", "1"), ("---", "1"), ("@@", "36"), ("+", "32"), ("-", "31"))


def wants_colour(choice: str, stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    if choice != "auto":
        return choice == "always"
    environ = os.environ if env is None else env
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and environ.get("TERM") != "dumb"


def _paint(text: str, sgr: str) -> str:
    return f"\x1b[{sgr}m{text}\x1b[0m"


# Keys the document's envelope owns: a command's payload cannot override them.
_ENVELOPE = frozenset({"command", "ok", "exit_code", "dry_run", "planned", "error"})


def relative_paths(value: object, root: Path | None) -> object:
    """Path objects anywhere in `value` as strings, relative to `root` when inside it."""
    if isinstance(value, PurePath):
        if root is not None and (path := Path(value).resolve()).is_relative_to(root.resolve()):
            return str(path.relative_to(root.resolve()))
        return str(value)
    if isinstance(value, Mapping):
        return {k: relative_paths(v, root) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [relative_paths(item, root) for item in value]
    return value


@contextlib.contextmanager
def stdout_kept_for_json(stream: TextIO) -> Iterator[None]:
    """While a --json command runs, file descriptor 1 points at stderr, so what uv, the
    engine or a `run` command prints cannot mix with the one document written afterwards.
    A stream that is not a real file (a test's capture) is left alone."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    stream.flush()
    saved = os.dup(fd)
    os.dup2(2, fd)
    try:
        yield
    finally:
        stream.flush()
        os.dup2(saved, fd)
        os.close(saved)


class Output:
    def __init__(
        self,
        *,
        json_mode: bool = False,
        quiet: bool = False,
        verbose: bool = False,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        env: Mapping[str, str] | None = None,
        color: str = "auto",
        document_on_stdout: bool = False,
    ) -> None:
        self.color = color
        self.json_mode = json_mode
        self.quiet = quiet
        self.verbose = verbose
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        # stdout carries a document (JSON, a Markdown table, a pull-request body, a CI
        # report) that users redirect to a file: progress, commands and diffs go to stderr.
        self._progress = self.stderr if json_mode or document_on_stdout else self.stdout
        self._env = env
        # --json: the one document, built up by json() and the planned commands, written once
        # by document() when the command's exit code is known (see docs/json.md).
        self._payload: dict[str, Any] = {}
        self._planned: list[dict[str, Any]] = []
        self.document_written = False

    @cached_property
    def _redaction(self) -> Redactor:
        """Built on first use: the environment's secret values are read once per command."""
        from uvdock.ui.redact import Redactor

        return Redactor(self._env)

    def shown(self, text: str) -> str:
        """`text` as the terminal may get it: redacted, with control sequences from file or
        log text made visible (uvdock's own colour codes are added after this)."""
        from uvdock.ui.terminal_text import escape

        return escape(self._redaction.text(text))

    def _write(self, stream: TextIO, text: str, *, label: str = "") -> None:
        stream.write(label + self.shown(text) + "\n")
        stream.flush()

    def document_text(self, text: str) -> None:
        if not self.quiet:
            self._write(self.stdout, text)

    def info(self, message: str) -> None:
        """Progress and results: on stderr when stdout carries a document (--json, --format)."""
        if not self.quiet:
            self._write(self._progress, message)

    def detail(self, message: str) -> None:
        if self.verbose and not self.quiet:
            self._write(self.stderr, message)

    def colour(self, stream: TextIO) -> bool:
        return wants_colour(self.color, stream, self._env)

    def _labelled(self, label: str, message: str, sep: str = " ") -> None:
        painted = _paint(f"{label}:", _SGR[label]) if self.colour(self.stderr) else f"{label}:"
        self._write(self.stderr, message, label=painted + sep)

    def warn(self, message: str) -> None:
        self._labelled("warning", message)

    def error(self, message: str) -> None:
        self._labelled("error", message)

    def hint(self, message: str) -> None:
        self._labelled("hint", message)

    def usage(self, line: str) -> None:
        """The usage line of a refused command line (argparse's `usage: ...`)."""
        self._labelled("usage", line.partition(":")[2], "")

    def command(self, argv: Sequence[str], *, prefix: str = "", placement: object = None) -> None:
        """A command as one copy-pasteable shell line (what --dry-run and -v show). Under
        --json it is also part of the document: `planned`, the argv as a list and where it
        would run (`placement`, a NamedTuple such as run.engines.Placement)."""
        import shlex

        words = self._redaction.argv(argv)
        self._write(self._progress, prefix + shlex.join(words))
        if self.json_mode:
            where = placement._asdict() if hasattr(placement, "_asdict") else None
            self._planned.append({"argv": words, "placement": where})

    def json(self, payload: Mapping[str, Any]) -> None:
        """The command's part of the --json document; several calls merge (later keys win)."""
        self._payload.update(payload)

    def document(
        self,
        command: str,
        exit_code: int,
        *,
        dry_run: bool,
        root: Path | None = None,
        error: Mapping[str, Any] | None = None,
    ) -> None:
        """Write the one --json document (docs/json.md), once: paths relative to `root`,
        every string redacted before serializing, so the output always parses."""
        import json

        if self.document_written:
            return
        body = {"command": command, "ok": not exit_code, "exit_code": exit_code, "dry_run": dry_run}
        body.update({k: v for k, v in self._payload.items() if k not in _ENVELOPE})
        if self._planned:
            body["planned"] = self._planned
        if error is not None:
            body["error"] = {**error, "exit_code": exit_code}
        clean = self._redaction.value(relative_paths(body, root))
        self.stdout.write(json.dumps(clean, indent=2, sort_keys=False) + "\n")
        self.stdout.flush()
        self.document_written = True

    def table(
        self, columns: Sequence[str], rows: Sequence[Sequence[object]], *, title: str | None = None
    ) -> None:
        if self.quiet:
            return
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        table = Table(title=title, show_lines=False, header_style="bold")
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*(escape(self.shown(str(cell))) for cell in row))
        # Piped output is read by grep and CI logs, not a terminal: do not fold at 80 columns.
        width = None if self.stdout.isatty() else 200
        colour = self.colour(self.stdout)
        Console(
            file=self.stdout,
            soft_wrap=False,
            width=width,
            force_terminal=colour,
            no_color=not colour,
            color_system="auto" if colour else None,
        ).print(table)

    def diff(self, text: str) -> None:
        if not text or self.quiet:
            return
        stream = self._progress
        text = self.shown(text if text.endswith("\n") else text + "\n")
        if self.colour(stream):
            paint = (
                next((_paint(ln, c) for s, c in _DIFF_SGR if ln.startswith(s)), ln)
                for ln in text.splitlines()
            )
            text = "".join(line + "\n" for line in paint)
        stream.write(text)
        stream.flush()
