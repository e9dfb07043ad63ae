"""doctor reads a log of any size in bounded memory: blocks of whole lines, lines cut at
MAX_LINE, carriage-return redraws and escape codes cleaned as a terminal shows them."""

from __future__ import annotations

import io
import re
import tracemalloc
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uvdock.doctor import logread, logscan

STALE = b"error: The lockfile at `uv.lock` needs to be updated, but `--locked` was provided."


def _reference(data: bytes) -> list[bytes]:
    """What a terminal shows of each line, computed the obvious way on the whole log."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    shown = []
    for line in lines:
        stripped = line.rstrip(b"\r")
        if b"\r" in stripped:
            stripped = stripped.rpartition(b"\r")[2]
        cut = stripped[: logread.MAX_LINE]
        shown.append(cut + (logread.TRUNCATED if len(stripped) > logread.MAX_LINE else b""))
    return shown


def _read(data: bytes) -> list[bytes]:
    joined = b"\n".join(logread.blocks(io.BytesIO(data)))
    return joined.split(b"\n") if joined or data.strip(b"\r") else []


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.sampled_from([b"a", b"bc", b"\r", b"\n", b"\r\n", b"x" * 7]), max_size=60),
    block=st.integers(min_value=1, max_value=16),
    max_line=st.integers(min_value=2, max_value=9),
)
def test_blocks_show_each_line_as_the_terminal_does(
    parts: list[bytes], block: int, max_line: int
) -> None:
    data = b"".join(parts)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(logread, "BLOCK", block)
        patch.setattr(logread, "MAX_LINE", max_line)
        got = _read(data)
        want = _reference(data)
    # A block boundary never changes a line, however the log is cut.
    assert [line for line in got if line] == [line for line in want if line]


def test_line_numbers_hold_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logread, "BLOCK", 64)
    lines = [f"line {i} progress\r{i}% done".encode() for i in range(1, 500)]
    lines[376] = b"\x1b[31m" + STALE + b"\x1b[0m"
    diagnosis = logscan.diagnose_stream(io.BytesIO(b"\n".join(lines) + b"\n"))
    assert [(f.signature, f.line_number, f.line) for f in diagnosis.findings] == [
        ("stale-lock", 377, STALE.decode())
    ]


class _GeneratedLog(io.RawIOBase):
    """A log of `size` bytes made as it is read: the test itself holds none of it."""

    def __init__(self, size: int, line: bytes) -> None:
        self.left = size
        self.line = line

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self.left)
        repeated = self.line * (count // len(self.line) + 1)
        buffer[:count] = repeated[:count]
        self.left -= count
        return count


@pytest.mark.parametrize(
    "line",
    [
        b"2025-06-01T10:00:00.1234567Z \x1b[32mPASSED\x1b[0m tests/test_x.py::test \xf0\x9f\x8e\x89\n",
        b"x" * 4096,  # no newline at all: one line of the whole size
        b"\x1b]" * 64,  # an unterminated OSC, repeated
    ],
)
def test_memory_stays_flat_whatever_the_log_size(line: bytes) -> None:
    peaks = []
    for size in (4 << 20, 40 << 20):  # the larger one above the 32-block bound below
        stream = io.BufferedReader(_GeneratedLog(size, line), buffer_size=1 << 16)
        tracemalloc.start()
        try:
            logscan.diagnose_stream(stream)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    # A block and a carried line, not the log: the same peak for 4 and 40 MB.
    assert peaks[1] < 32 * logread.BLOCK, peaks
    assert peaks[1] < peaks[0] * 1.5, peaks


def _pathological() -> Iterator[tuple[str, bytes]]:
    yield "unterminated OSC", b"\x1b]" * 80_000
    yield "unterminated module", b"ModuleNotFoundError: No module named '" + b"a" * 80_000
    yield "repeated copy-pr-bot", b"copy-pr-bot " * 20_000
    yield "repeated CONFLICT", b"CONFLICT (" * 20_000


@pytest.mark.parametrize(("name", "line"), list(_pathological()))
def test_every_line_reaches_the_patterns_cut_to_max_line(name: str, line: bytes) -> None:
    # Counting work: the patterns only ever see lines of at most MAX_LINE bytes, and every
    # byte of the log at most once, so no input makes the scan superlinear in the log.
    data = (line + b"\n") * 3
    seen = list(logread.blocks(io.BytesIO(data)))
    lines = b"\n".join(seen).split(b"\n")
    assert len(lines) == 3, name
    assert all(len(one) <= logread.MAX_LINE + len(logread.TRUNCATED) for one in lines)
    assert sum(len(block) for block in seen) <= len(data)


def test_escape_sequences_are_removed_without_backtracking() -> None:
    text = b"\x1b]0;title\x07ok \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b[1;31mred\x1b[0m \x1bPq\x1b\\"
    (block,) = logread.blocks(io.BytesIO(text + b"\n"))
    assert block == b"ok link red "
    assert re.search(rb"\x1b", block) is None
