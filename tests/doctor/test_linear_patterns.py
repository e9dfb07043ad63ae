"""The signature patterns take linear time on any line, never span lines, and the plain-text
hints that let doctor skip a block are in every match."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from uvdock.doctor import logscan
from uvdock.doctor.signatures import SIGNATURES

CORPUS = Path(__file__).parents[1] / "data" / "doctor"
PATTERNS = sorted(
    {p for s in SIGNATURES for p in (*s.patterns, *s.requires, *filter(None, [s.unless]))}
    | {logscan.ERROR_LINE}
)
_NEGATED_CLASS = re.compile(r"\[\^((?:\\.|[^\]])*)\]")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_no_pattern_can_span_lines(pattern: str) -> None:
    for negated in _NEGATED_CLASS.findall(pattern):
        assert "\\n" in negated or "\\s" in negated, f"[^{negated}] matches a line feed"
    outside = _NEGATED_CLASS.sub("", pattern)
    assert "\\s" not in outside and "\\n" not in outside and "(?s" not in outside


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_match_holds_a_hint(pattern: str) -> None:
    hints = logscan._hints(pattern)
    if hints is None:
        return
    compiled = re.compile(pattern.encode(), re.MULTILINE)
    matched = 0
    for log in CORPUS.glob("*.log"):
        for match in compiled.finditer(log.read_bytes()):
            matched += 1
            assert any(hint in match.group() for hint in hints), (log.name, match.group())
    del matched  # some patterns only have synthetic examples; the hint holds where they match


@pytest.mark.parametrize(
    ("pattern", "hints"),
    [
        (r"Failed to parse:? `uv\.lock`", (b"Failed to parse",)),
        (r"\b[Cc]onnection refused", (b"onnection refused",)),
        (r"Get \"https?://|dial tcp", (b'Get "http', b"dial tcp")),
        (r"ab(?:cd)?|x", None),  # one alternative holds nothing plain: no skipping
        (r"\x1bxyz", None),  # a code, not text
        (r"(?i)heredoc not supported", None),  # case-blind: the text may be spelled otherwise
        (r"uv(?<![\w-]uv): (?:command )?not found", (b"not found",)),
        # A bounded quantifier's digits are no text of the log (review: they were taken as
        # the hint, so the block was skipped and the signature never fired).
        (r"abc\S{100,200}xyz", (b"abc",)),
        (r"x[ab]{12345}yzw", (b"yzw",)),
        (r"(?:ab){2,3}cde", (b"cde",)),
        (r"a\Sbc{1,3}", None),
    ],
)
def test_hints_are_the_plain_text_of_each_alternative(
    pattern: str, hints: tuple[bytes, ...] | None
) -> None:
    assert logscan._hints(pattern) == hints


def test_a_signature_with_a_bounded_quantifier_fires() -> None:
    from uvdock.doctor.signatures import Signature

    bounded = Signature("bounded", (r"ab\S{100,200}",), "cause", "fix", "command")
    found = logscan.diagnose("noise\nab" + "x" * 150 + "\n", (bounded,))
    assert [f.signature for f in found.findings] == ["bounded"]


# Lines built to make a backtracking pattern quadratic: the start of a pattern repeated, or
# one start followed by a long run that never ends the match. The cases are here.
FAMILIES: dict[str, Callable[[int], str]] = {
    "unterminated OSC": lambda n: "\x1b]" * n,
    "unterminated module": lambda n: "ModuleNotFoundError: No module named '" + "a" * n,
    "repeated module": lambda n: "ModuleNotFoundError: No module named 'a" * (n // 40),
    "repeated copy-pr-bot": lambda n: "copy-pr-bot " * (n // 12),
    "repeated CONFLICT": lambda n: "CONFLICT (" * (n // 10),
    "repeated lookup": lambda n: "lookup a on " * (n // 12),
    "repeated Group": lambda n: "Group `" * (n // 7),
    "repeated resolve": lambda n: "Failed to resolve '" * (n // 19),
    "spaces": lambda n: " " * n,
    "connection": lambda n: "Connection " * (n // 11),
    "downloading": lambda n: "Downloading nvidia-" + "a-" * (n // 2),
}


def _cpu(search: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(3):
            search()
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("family", FAMILIES)
def test_patterns_grow_linearly_on_hostile_lines(family: str) -> None:
    # The growth order, not a speed budget: 8 times the line may cost about 8 times the
    # work; a quadratic pattern costs 64 times (the cases took 19 s to 109 s).
    small, large = FAMILIES[family](4_000), FAMILIES[family](32_000)
    compiled = [re.compile(p.encode(), re.MULTILINE) for p in PATTERNS]
    small_b, large_b = small.encode(), large.encode()
    t_small = _cpu(lambda: [c.search(small_b) for c in compiled])
    t_large = _cpu(lambda: [c.search(large_b) for c in compiled])
    assert t_large < max(t_small, 1e-4) * 24, (family, t_small, t_large)
