"""Issue 29, item 8: `--json` with a stdout that cannot take the document.

A full disk (/dev/full), a stdout closed before uvdock starts, and a reader that goes away
(a broken pipe): one line on stderr, exit 3, never a traceback, for each command and for a
refusal's error document too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = [
    ("image", "check"),
    ("image", "show"),
    ("lts", "show"),
    ("recipe", "show"),
    ("lock", "diff", "HEAD", "HEAD"),
    ("trust", "--show"),
    ("image", "bump", "26.09-py3", "--offline", "--dry-run"),
]


def _uvdock(repo: Path, words: tuple[str, ...], sink: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), "--json", *words]
    env = {**os.environ, "UVDOCK_OFFLINE": "1"}
    if sink == "full":
        with open("/dev/full", "w") as full:
            return subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, env=env)
    if sink == "closed":  # fd 1 closed before uvdock starts: sys.stdout is None
        shell = ["sh", "-c", 'exec "$@" >&-', "sh", *argv]
        return subprocess.run(shell, stderr=subprocess.PIPE, text=True, env=env)
    reader_gone = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert reader_gone.stdout is not None
    reader_gone.stdout.close()  # the reader went away before the document came
    err = reader_gone.stderr.read() if reader_gone.stderr else ""
    return subprocess.CompletedProcess(argv, reader_gone.wait(timeout=120), "", err)


@pytest.mark.parametrize("sink", ["full", "closed", "broken-pipe"])
@pytest.mark.parametrize("words", COMMANDS, ids=lambda words: " ".join(words[:2]))
def test_an_unwritable_stdout_is_one_line_and_exit_3(
    words: tuple[str, ...], sink: str, megatron_repo: Path
) -> None:
    done = _uvdock(megatron_repo, words, sink)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode == 3, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "stdout" in errors[0], done.stderr


@pytest.mark.parametrize("sink", ["full", "closed", "broken-pipe"])
def test_a_refusals_document_that_cannot_be_written_is_still_one_line(
    sink: str, tmp_path: Path
) -> None:
    done = _uvdock(tmp_path, ("image", "check"), sink)  # not a git repository: exit 3 anyway
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode == 3, done.stderr
    assert "not inside a git repository" in done.stderr
