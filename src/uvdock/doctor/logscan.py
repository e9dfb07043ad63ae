"""Find the failure signatures in a log of any size: each cleaned block (logread.py) is scanned
once per pattern, skipped when it lacks the plain text every match holds (`_hints`)."""

from __future__ import annotations

import io
import re
import shlex
from collections.abc import Mapping
from functools import cache
from typing import BinaryIO, NamedTuple

from uvdock.doctor.import_names import distributions
from uvdock.doctor.logread import blocks
from uvdock.doctor.signatures import SIGNATURES, Advice, Finding, Signature
from uvdock.project.declared import Declared, for_module

MAX_ERROR_LINES = 40
# Lines worth showing when no signature matched.
ERROR_LINE = r"[Ee]rror:|Error\b|ERROR|Traceback|FAILED|fatal:"


class Diagnosis(NamedTuple):
    findings: list[Finding]
    error_lines: list[tuple[int, str]]  # only when nothing matched


@cache
def _compiled(pattern: str) -> re.Pattern[bytes]:
    # One C-level scan of a block per pattern: `^` anchors at every line start.
    return re.compile(pattern.encode(), re.MULTILINE)


# A pattern's atoms, left to right: an escape, a character class or one character, each with
# the quantifier after it (`?`, `*`, `+` or `{m,n}`, lazy or possessive); or `(` or `|`.
_TOKEN = re.compile(
    r"(?P<atom>\\.?|\[(?:\\.|[^\]])*\]?|[^(|])"
    r"(?P<quantifier>(?:[?*+]|\{\d*(?:,\d*)?\})[?+]?)?|[(|]",
    re.DOTALL,
)


@cache
def _hints(pattern: str) -> tuple[bytes, ...] | None:
    """Plain text every match of `pattern` holds, one per top-level alternative (None: no such
    text): the longest run outside groups and classes, not an escape like \\b, not quantified.
    A block holding none is not searched: `in` runs at memory speed, a regular expression that
    starts with a class or `\\b` at a few MB/s."""
    if re.search(r"\(\?[a-zA-Z]*[ix]", pattern):  # case-blind or verbose: no plain text
        return None
    hints: list[str] = []
    best = run = ""
    depth, opaque = 0, False  # opaque: after a code (\x, \u, \N) or a back-reference
    for token in _TOKEN.finditer(pattern):
        atom, text = token["atom"], None
        if atom is None and token[0] == "|" and depth == 0:
            hints.append(best)
            best, run, opaque = "", "", False
            continue
        if atom is None:  # `(`, or `|` inside a group
            depth += token[0] == "("
        elif atom == ")":
            depth -= 1
        elif atom[0] == "\\":
            escaped = atom[1:]
            opaque = opaque or escaped in ("x", "u", "U", "N", "0") or escaped.isdigit()
            text = escaped if escaped and not escaped.isalnum() else None
        elif atom[0] != "[" and atom not in "^$.?*+{}":
            text = atom
        if not opaque:
            run = run + text if text is not None and depth == 0 and not token["quantifier"] else ""
            best = max(best, run, key=len)
    hints.append(best)
    return None if any(len(hint) < 3 for hint in hints) else tuple(h.encode() for h in hints)


def _may_match(pattern: str, text: bytes) -> bool:
    return (hints := _hints(pattern)) is None or any(hint in text for hint in hints)


def _search(pattern: str, text: bytes, unless: str | None = None) -> re.Match[bytes] | None:
    if not _may_match(pattern, text):
        return None
    for match in _compiled(pattern).finditer(text):
        if unless is None or not _compiled(unless).search(_line_at(text, match.start())):
            return match
    return None


def _line_at(text: bytes, offset: int) -> bytes:
    start = text.rfind(b"\n", 0, offset) + 1
    end = text.find(b"\n", offset)
    return text[start : end if end >= 0 else len(text)].strip()


def _where(text: bytes, offset: int, first_line: int) -> tuple[int, str]:
    shown = _line_at(text, offset).decode("utf-8", "replace")
    return first_line + text.count(b"\n", 0, offset), shown


class _Defaults(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return f"<{key}>"


def _advice(
    signature: Signature, groups: dict[str, str], declared: Mapping[str, Declared]
) -> Advice:
    """The signature's own texts, or its `if_declared` ones when the project declares the
    package the hit names (then `groups` gains where and how to sync it)."""
    plain = Advice(signature.cause, signature.fix, signature.command)
    if (module := groups.get("module")) is None:
        return plain
    dotted = module + groups.get("submodule", "")
    if (hit := for_module(declared, dotted)) is None or signature.if_declared is None:
        found = distributions(dotted)
        if found == () and signature.if_no_distribution is not None:
            return signature.if_no_distribution
        groups["distribution"] = shlex.quote(found[0] if found else module)
        return plain
    groups.update(declared_in=hit.where, distribution=hit.distribution, sync=hit.sync)
    return signature.if_declared


def diagnose_stream(
    stream: BinaryIO,
    signatures: tuple[Signature, ...] = SIGNATURES,
    declared: Mapping[str, Declared] | None = None,
) -> Diagnosis:
    """The first hit of each signature, in log order; when none, the first MAX_ERROR_LINES lines
    that look like errors. `declared` (project.declared) makes the advice fit the project."""
    hits: dict[str, tuple[int, str, dict[str, str]]] = {}
    required: set[str] = set()  # `requires` patterns seen somewhere
    error_lines: dict[int, str] = {}  # line number -> line
    first_line = 1
    for text in blocks(stream):
        for signature in signatures:
            required.update(p for p in signature.requires if p not in required and _search(p, text))
            if signature.name in hits:
                continue
            found = [m for p in signature.patterns if (m := _search(p, text, signature.unless))]
            if found:
                match = min(found, key=lambda m: m.start())
                named = match.groupdict().items()
                groups = {k: v.decode("utf-8", "replace") for k, v in named if v is not None}
                hits[signature.name] = (*_where(text, match.start(), first_line), groups)
        # Shown only when nothing is found.
        if len(error_lines) < MAX_ERROR_LINES and _may_match(ERROR_LINE, text):
            for match in _compiled(ERROR_LINE).finditer(text):
                error_lines.setdefault(*_where(text, match.start(), first_line))
                if len(error_lines) == MAX_ERROR_LINES:
                    break
        first_line += text.count(b"\n") + 1
    findings = []
    for signature in signatures:
        if (hit := hits.get(signature.name)) is None or not required.issuperset(signature.requires):
            continue
        number, line, groups = hit
        # The `run:` line is pasted into a shell: a word the log chose is one quoted word.
        from_log = {key: shlex.quote(value) for key, value in groups.items()}
        advice = _advice(signature, groups, declared or {})
        cause, fix = (text.format_map(_Defaults(groups)) for text in advice[:2])
        command = advice.command.format_map(_Defaults({**groups, **from_log}))
        findings.append(Finding(signature.name, line, number, cause, fix, command))
    findings.sort(key=lambda f: f.line_number)
    return Diagnosis(findings, [] if findings else list(error_lines.items()))


def diagnose(
    text: str,
    signatures: tuple[Signature, ...] = SIGNATURES,
    declared: Mapping[str, Declared] | None = None,
) -> Diagnosis:
    data = text.encode("utf-8", "surrogateescape")
    return diagnose_stream(io.BytesIO(data), signatures, declared)
