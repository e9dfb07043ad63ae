"""Find the failure signatures in a log of any size.

logread.py hands over the log as cleaned blocks of whole lines; each block is scanned with
each signature's patterns, one C-level pass per pattern (compiled for bytes), skipped when
the block lacks the plain text every match holds (`_hints`). The patterns are written to
run in linear time (see signatures.py), so no line is slow, and memory stays a block.
"""

from __future__ import annotations

import io
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import BinaryIO

from uvdock.doctor.logread import blocks
from uvdock.doctor.signatures import SIGNATURES, Advice, Finding, Signature
from uvdock.project.declared import Declared, for_module

MAX_ERROR_LINES = 40

# Lines worth showing when no signature matched.
ERROR_LINE = r"[Ee]rror:|Error\b|ERROR|Traceback|FAILED|fatal:"


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)
    error_lines: list[tuple[int, str]] = field(default_factory=list)  # when nothing matched


@cache
def _compiled(pattern: str) -> re.Pattern[bytes]:
    # One C-level scan of a block per pattern: `^` anchors at every line start.
    return re.compile(pattern.encode(), re.MULTILINE)


@cache
def _hints(pattern: str) -> tuple[bytes, ...] | None:
    """Plain text that every match of `pattern` holds, one per top-level alternative (None:
    no such text). A block holding none of them is not searched: `in` runs at memory speed,
    a regular expression that starts with a class or `\\b` at a few MB/s."""
    if re.search(r"\(\?[a-zA-Z]*[ix]", pattern):  # case-blind or verbose: no plain text
        return None
    hints = []
    for branch in _top_level(pattern):
        hint = max(_literal_runs(branch), key=len, default="")
        if len(hint) < 3:
            return None
        hints.append(hint.encode())
    return tuple(hints)


def _top_level(pattern: str) -> list[str]:
    branches, depth, start, index, in_class = [], 0, 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            branches.append(pattern[start:index])
            start = index + 1
        index += 1
    return [*branches, pattern[start:]]


def _literal_runs(branch: str) -> Iterator[str]:
    """Runs of characters that must appear as they are: outside groups and classes, not
    escapes like \\b or \\d, not followed by a quantifier."""
    run, depth, index, in_class = "", 0, 0, False
    while index < len(branch):
        char, literal = branch[index], None
        if char == "\\":
            escaped = branch[index + 1 : index + 2]
            if escaped in ("x", "u", "U", "N", "0") or escaped.isdigit():
                break  # a code or a back-reference: what follows is no plain text
            literal = escaped if escaped and not escaped.isalnum() else None
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char not in "^$.|?*+{}":
            literal = char
        index += 1
        quantified = index < len(branch) and branch[index] in "?*+{"
        if literal is not None and depth == 0 and not in_class and not quantified:
            run += literal
            continue
        yield run
        run = ""
    yield run


def _may_match(pattern: str, text: bytes) -> bool:
    hints = _hints(pattern)
    return hints is None or any(hint in text for hint in hints)


def _fill(template: str, values: dict[str, str]) -> str:
    return template.format_map(_Defaults(values))


class _Defaults(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return f"<{key}>"


def _line_at(text: bytes, offset: int) -> bytes:
    start = text.rfind(b"\n", 0, offset) + 1
    end = text.find(b"\n", offset)
    return text[start : end if end >= 0 else len(text)].strip()


def _shown(line: bytes) -> str:
    return line.decode("utf-8", "replace")


def _first_hit(signature: Signature, text: bytes) -> re.Match[bytes] | None:
    hits = [m for p in signature.patterns if (m := _search(signature, p, text))]
    return min(hits, key=lambda m: m.start()) if hits else None


def _search(signature: Signature, pattern: str, text: bytes) -> re.Match[bytes] | None:
    if not _may_match(pattern, text):
        return None
    if signature.unless is None:
        return _compiled(pattern).search(text)
    unless = _compiled(signature.unless)
    for match in _compiled(pattern).finditer(text):
        if not unless.search(_line_at(text, match.start())):
            return match
    return None


class _Scan:
    def __init__(self, signatures: tuple[Signature, ...], declared: Mapping[str, Declared]) -> None:
        self.signatures = signatures
        self.declared = declared
        self.hits: dict[str, tuple[int, str, dict[str, str]]] = {}
        self.required: set[str] = set()  # `requires` patterns seen somewhere
        self.error_lines: list[tuple[int, str]] = []

    def block(self, text: bytes, first_line: int) -> None:
        for signature in self.signatures:
            for pattern in signature.requires:
                if pattern in self.required or not _may_match(pattern, text):
                    continue
                if _compiled(pattern).search(text):
                    self.required.add(pattern)
            if signature.name in self.hits or (match := _first_hit(signature, text)) is None:
                continue
            groups = {k: _shown(v) for k, v in match.groupdict().items() if v is not None}
            number = first_line + text.count(b"\n", 0, match.start())
            self.hits[signature.name] = (number, _shown(_line_at(text, match.start())), groups)
        if len(self.error_lines) < MAX_ERROR_LINES:  # shown only when nothing is found
            self._error_lines(text, first_line)

    def _error_lines(self, text: bytes, first_line: int) -> None:
        if not _may_match(ERROR_LINE, text):
            return
        for match in _compiled(ERROR_LINE).finditer(text):
            number = first_line + text.count(b"\n", 0, match.start())
            if self.error_lines and self.error_lines[-1][0] == number:
                continue
            self.error_lines.append((number, _shown(_line_at(text, match.start()))))
            if len(self.error_lines) == MAX_ERROR_LINES:
                return

    def findings(self) -> list[Finding]:
        found = []
        for signature in self.signatures:
            hit = self.hits.get(signature.name)
            if hit is None or not self.required.issuperset(signature.requires):
                continue
            number, line, groups = hit
            # The `run:` line is pasted into a shell: a word the log chose is one quoted word.
            from_log = {key: shlex.quote(value) for key, value in groups.items()}
            advice = self._advice(signature, groups)
            found.append(
                Finding(
                    signature=signature.name,
                    line_number=number,
                    line=line,
                    cause=_fill(advice.cause, groups),
                    fix=_fill(advice.fix, groups),
                    command=_fill(advice.command, {**groups, **from_log}),
                )
            )
        return sorted(found, key=lambda f: f.line_number)

    def _advice(self, signature: Signature, groups: dict[str, str]) -> Advice:
        """The signature's own texts, or its `if_declared` ones when the project declares
        the package the hit names (then `groups` gains where and how to sync it)."""
        plain = Advice(signature.cause, signature.fix, signature.command)
        module = groups.get("module")
        if signature.if_declared is None or module is None:
            return plain
        declared = for_module(self.declared, module)
        if declared is None:
            return plain
        groups.update(
            declared_in=declared.where, distribution=declared.distribution, sync=declared.sync
        )
        return signature.if_declared


def diagnose_stream(
    stream: BinaryIO,
    signatures: tuple[Signature, ...] = SIGNATURES,
    declared: Mapping[str, Declared] | None = None,
) -> Diagnosis:
    """Every signature found in the log (first hit of each, in log order); when none is,
    the first MAX_ERROR_LINES lines that look like errors. `declared`: the project's
    declarations (project.declared), for advice that fits."""
    scan = _Scan(signatures, declared or {})
    line = 1
    for text in blocks(stream):
        scan.block(text, line)
        line += text.count(b"\n") + 1
    findings = scan.findings()
    return Diagnosis(findings, [] if findings else scan.error_lines)


def diagnose(
    text: str,
    signatures: tuple[Signature, ...] = SIGNATURES,
    declared: Mapping[str, Declared] | None = None,
) -> Diagnosis:
    data = text.encode("utf-8", "surrogateescape")
    return diagnose_stream(io.BytesIO(data), signatures, declared)
