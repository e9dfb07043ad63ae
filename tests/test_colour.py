"""Colour: `error:`, `warning:`, `hint:`, diffs and tables are coloured on a terminal only,
--color always|never overrides, NO_COLOR and FORCE_COLOR are respected; the fast paths do not
import rich."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from uvdock.ui.output import Output, wants_colour

ESC = "\x1b["


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("choice", "env", "tty", "expected"),
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"TERM": "dumb"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {"FORCE_COLOR": "1"}, True, False),
    ],
)
def test_when_colour_is_wanted(choice: str, env: dict[str, str], tty: bool, expected: bool) -> None:
    stream = Terminal() if tty else io.StringIO()
    assert wants_colour(choice, stream, env) is expected


def _output(color: str, stream: io.StringIO, env: dict[str, str] | None = None) -> Output:
    return Output(stdout=stream, stderr=stream, color=color, env=env or {})


def test_labels_are_coloured_only_when_wanted() -> None:
    coloured, plain = Terminal(), io.StringIO()
    for stream in (coloured, plain):
        out = _output("auto", stream)
        out.error("no uv.lock")
        out.warn("stale")
        out.hint("run uvdock lock")
    assert coloured.getvalue() == (
        "\x1b[1;31merror:\x1b[0m no uv.lock\n"
        "\x1b[1;33mwarning:\x1b[0m stale\n"
        "\x1b[1;36mhint:\x1b[0m run uvdock lock\n"
    )
    assert plain.getvalue() == "error: no uv.lock\nwarning: stale\nhint: run uvdock lock\n"


DIFF = "--- a/docker/.ngc_version.dev\n+++ b/docker/.ngc_version.dev\n@@ -1 +1 @@\n-26.04-py3\n+26.08-py3\n"


def test_diffs_are_coloured_on_a_terminal_and_plain_in_a_pipe() -> None:
    terminal, pipe = Terminal(), io.StringIO()
    _output("auto", terminal).diff(DIFF)
    _output("auto", pipe).diff(DIFF)
    assert pipe.getvalue() == DIFF
    lines = terminal.getvalue().splitlines()
    assert lines[3] == "\x1b[31m-26.04-py3\x1b[0m" and lines[4] == "\x1b[32m+26.08-py3\x1b[0m"
    never = Terminal()
    _output("never", never).diff(DIFF)
    assert never.getvalue() == DIFF


def test_tables_follow_the_same_rule() -> None:
    for color, stream, env, coloured in (
        ("auto", io.StringIO(), {}, False),
        ("always", io.StringIO(), {}, True),
        ("auto", io.StringIO(), {"FORCE_COLOR": "1"}, True),
        ("auto", Terminal(), {"NO_COLOR": "1"}, False),
    ):
        _output(color, stream, env).table(["package", "pin"], [["torch", "2.8.0"]])
        assert (ESC in stream.getvalue()) is coloured, (color, env)
        assert "torch" in stream.getvalue()


def _uvdock(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "uvdock", *args],
        capture_output=True,
        text=True,
        env={**environ, **(env or {})},
        check=False,
    )


def test_piped_errors_have_no_escape_codes_unless_asked() -> None:
    assert ESC not in _uvdock("image", "bmup").stderr
    assert "\x1b[1;31merror:" in _uvdock("--color", "always", "image", "bmup").stderr
    assert "\x1b[1;31merror:" in _uvdock("image", "bmup", env={"FORCE_COLOR": "1"}).stderr
    assert ESC not in _uvdock("--color=never", "image", "bmup", env={"FORCE_COLOR": "1"}).stderr


def test_a_run_commands_own_color_word_does_not_colour_uvdocks_error(tmp_path: Path) -> None:
    # `--color=always` after `run CMD` is the command's argument: uvdock's own error (no git
    # repository there) is read with the global options uvdock was given, not found in it.
    result = _uvdock("--repo", str(tmp_path), "run", "ls", "--color=always")
    assert result.returncode == 3, result.stderr
    assert "error:" in result.stderr and ESC not in result.stderr


def _in_a_terminal(*args: str, env: dict[str, str]) -> str:
    """Run uvdock with stdout and stderr on a real pseudo-terminal; what it wrote."""
    main, child = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvdock", *args],
        stdout=child,
        stderr=child,
        env={**environ, "TERM": "xterm-256color", **env},
    )
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait()
    os.close(main)
    return b"".join(chunks).decode()


def test_a_real_terminal_gets_colour_and_no_color_turns_it_off() -> None:
    assert "\x1b[1;31merror:\x1b[0m unknown command" in _in_a_terminal("image", "bmup", env={})
    assert ESC not in _in_a_terminal("image", "bmup", env={"NO_COLOR": "1"})


@pytest.mark.parametrize(
    "words",
    [
        ["--version"],
        ["--engine", "podman", "--image", "img:1", "--dry-run", "run", "--", "true"],
    ],
)
def test_the_fast_paths_do_not_import_rich(
    words: list[str], make_repo: Callable[..., Path]
) -> None:
    repo = make_repo()
    code = (
        "import sys; from uvdock.cli import main as cli; code = cli.main(sys.argv[1:]); "
        "assert 'rich' not in sys.modules, 'rich imported'; sys.exit(code)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "--repo", str(repo), *words]
        if words[0] != "--version"
        else [sys.executable, "-c", code, *words],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
