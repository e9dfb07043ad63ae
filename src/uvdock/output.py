"""What the user sees: messages, tables, diffs, JSON and --dry-run command lines.

Everything passes through `redact` first. rich is imported only when a table or a coloured
diff is drawn, so commands that print a line or two stay fast.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from uvdock.redact import Redactor


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
    ) -> None:
        self.json_mode = json_mode
        self.quiet = quiet
        self.verbose = verbose
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self._env = env

    # Built on first use: the secret values of the environment are read once per command.
    _redactor: Redactor | None = None

    def _redaction(self) -> Redactor:
        if self._redactor is None:
            from uvdock.redact import Redactor

            self._redactor = Redactor(self._env)
        return self._redactor

    def _clean(self, text: str) -> str:
        return self._redaction().text(text)

    def _write(self, stream: TextIO, text: str) -> None:
        stream.write(self._clean(text) + "\n")
        stream.flush()

    def info(self, message: str) -> None:
        """Normal progress and results. In --json mode they go to stderr, keeping stdout JSON."""
        if not self.quiet:
            self._write(self.stderr if self.json_mode else self.stdout, message)

    def detail(self, message: str) -> None:
        if self.verbose and not self.quiet:
            self._write(self.stderr, message)

    def warn(self, message: str) -> None:
        self._write(self.stderr, f"warning: {message}")

    def error(self, message: str) -> None:
        self._write(self.stderr, f"uvdock: error: {message}")

    def hint(self, message: str) -> None:
        self._write(self.stderr, f"hint: {message}")

    def command(self, argv: Sequence[str], *, prefix: str = "") -> None:
        """A command as one copy-pasteable shell line (what --dry-run and -v show)."""
        import shlex

        words = self._redaction().argv(argv)
        self._write(self.stderr if self.json_mode else self.stdout, prefix + shlex.join(words))

    def json(self, payload: Any) -> None:
        """The payload with every string redacted, then serialized: the output always parses."""
        import json

        clean = self._redaction().value(payload)
        self.stdout.write(json.dumps(clean, indent=2, sort_keys=False) + "\n")
        self.stdout.flush()

    def table(
        self, columns: Sequence[str], rows: Sequence[Sequence[object]], *, title: str | None = None
    ) -> None:
        if self.quiet:
            return
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, show_lines=False, header_style="bold")
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*(self._clean(str(cell)) for cell in row))
        # Piped output is read by grep and CI logs, not a terminal: do not fold at 80 columns.
        width = None if self.stdout.isatty() else 200
        Console(file=self.stdout, soft_wrap=False, width=width).print(table)

    def diff(self, text: str) -> None:
        if not text or self.quiet:
            return
        stream = self.stderr if self.json_mode else self.stdout
        if not stream.isatty():
            stream.write(self._clean(text if text.endswith("\n") else text + "\n"))
            stream.flush()
            return
        from rich.console import Console
        from rich.syntax import Syntax

        Console(file=stream).print(Syntax(self._clean(text), "diff", theme="ansi_dark"))
