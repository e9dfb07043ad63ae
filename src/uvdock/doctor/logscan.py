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
from itertools import pairwise
from typing import BinaryIO, NamedTuple

from uvdock.doctor.import_names import distributions
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


# After an atom: `?`, `*`, `+` or `{m,n}`, lazy (`?`) or possessive (`+`).
_QUANTIFIER = re.compile(r"(?:[?*+]|\{\d*(?:,\d*)?\})[?+]?")


class _Atom(NamedTuple):
    start: int
    text: str | None  # the plain text every match of it holds, if any
    depth: int  # the group depth it stands at
    opaque: bool  # a code (\x, \u, \N) or a back-reference: no plain text after it


def _atoms(pattern: str) -> Iterator[_Atom]:
    """The pattern's atoms, left to right: an escape, a character class, a parenthesis, `|`,
    or one character; a quantifier belongs to the atom before it, which then holds no text."""
    index, depth = 0, 0
    while index < len(pattern):
        start, char, text, opaque = index, pattern[index], None, False
        if char == "\\":
            escaped = pattern[index + 1 : index + 2]
            opaque = escaped in ("x", "u", "U", "N", "0") or escaped.isdigit()
            text = escaped if escaped and not escaped.isalnum() else None
            index += 2
        elif char == "[":
            index = _class_end(pattern, index + 1)
        else:
            depth += {"(": 1, ")": -1}.get(char, 0)
            text = None if char in "^$.|?*+{}()" else char
            index += 1
        if char not in "(|" and (quantifier := _QUANTIFIER.match(pattern, index)):
            index, text = quantifier.end(), None
        yield _Atom(start, text, depth, opaque)


def _class_end(pattern: str, index: int) -> int:
    while index < len(pattern) and pattern[index] != "]":
        index += 2 if pattern[index] == "\\" else 1
    return index + 1


def _top_level(pattern: str) -> list[str]:
    bars = [a.start for a in _atoms(pattern) if a.depth == 0 and pattern[a.start] == "|"]
    edges = [-1, *bars, len(pattern)]
    return [pattern[left + 1 : right] for left, right in pairwise(edges)]


def _literal_runs(branch: str) -> Iterator[str]:
    """Runs of characters that must appear as they are: outside groups and classes, not
    escapes like \\b or \\d, not under a quantifier."""
    run = ""
    for atom in _atoms(branch):
        if atom.opaque:
            break
        if atom.text is not None and atom.depth == 0:
            run += atom.text
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
        if module is None:
            return plain
        dotted = module + groups.get("submodule", "")
        declared = for_module(self.declared, dotted)
        if declared is None or signature.if_declared is None:
            found = distributions(dotted)
            if found == () and signature.if_no_distribution is not None:
                return signature.if_no_distribution
            groups["distribution"] = shlex.quote(found[0] if found else module)
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
