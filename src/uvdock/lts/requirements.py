"""The LTS pin set (docker/lts/requirements.txt, read by `docker/Dockerfile.ci.lts`).

Parsing keeps every byte's position (the lines of uvdock.files.textlines), so edits (lts/pin.py)
change only a named pin's text and CRLF or a missing final newline survive. A requirement line
may carry pip options (`--hash=...`), continue after a trailing backslash, end in a `# comment`.
"""

from __future__ import annotations

import re
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import EnvironmentUnusable
from uvdock.files.textlines import Line, read_text, regular_file, split_lines
from uvdock.project.names import normalize_name

# A comment starts at "#" at the start of the text or after whitespace (pip's rule): a
# "#" inside a URL (`#egg=`, `#subdirectory=`) is not one.
_COMMENT = re.compile(r"(?:^|(?<=\s))#")
# pip options on a requirement line (`--hash=...`) follow whitespace.
_OPTION = re.compile(r"(?<=\s)--?[A-Za-z]")


class LineParts(NamedTuple):
    """The first physical line of a requirement, cut so its text can be replaced in place."""

    indent: str
    requirement: str  # the requirement as written, e.g. "einops==0.8.2"
    gap: str  # whitespace between the requirement and the tail
    tail: str  # options, comment and/or the continuation backslash


@dataclass(frozen=True)
class Requirement:
    """What a requirement line says, as packaging reads it."""

    name: str  # in a Pin: as the file spells it
    extras: tuple[str, ...]
    specifier: str  # "==4.67.3", "" for a URL or a bare name
    version: str | None  # of an exact `==` pin
    url: str | None
    marker: str | None


@dataclass(frozen=True)
class Pin(Requirement):
    line: int  # 1-based physical line where the requirement starts
    key: str  # PEP 503 normalized name
    spec: str  # the requirement text as written
    comment: str
    options: tuple[str, ...]  # pip options on the line, e.g. --hash=sha256:...

    @property
    def hashes(self) -> tuple[str, ...]:
        return tuple(o.split("=", 1)[1] for o in self.options if o.startswith("--hash="))

    def as_json(self) -> dict[str, object]:
        shown = ("name", "spec", "line", "version", "url", "extras", "marker", "comment", "hashes")
        return {k: list(v) if isinstance(v := getattr(self, k), tuple) else v for k in shown}


class Problem(NamedTuple):
    line: int
    message: str


class LtsFile(NamedTuple):
    text: str
    lines: list[Line]
    pins: list[Pin]
    problems: list[Problem]  # lines that are not requirements

    def find(self, key: str) -> list[Pin]:
        return [p for p in self.pins if p.key == key]

    @property
    def line_ending(self) -> str:  # the first one the file uses
        return next((line.ending for line in self.lines if line.ending), "\n")


def cut_line(content: str) -> LineParts:
    body = content.lstrip()
    indent = content[: len(content) - len(body)]
    ends = [len(body)] + [m.start() for p in (_COMMENT, _OPTION) if (m := p.search(body))]
    if body.rstrip().endswith("\\"):
        ends.append(len(body.rstrip()) - 1)
    tail_start = min(ends)
    requirement = body[:tail_start].rstrip()
    return LineParts(indent, requirement, body[len(requirement) : tail_start], body[tail_start:])


def _logical_text(contents: list[str]) -> tuple[str, str, tuple[str, ...]]:
    """(requirement, comment, options) of a logical line made of continued physical lines."""
    texts, comment = [], ""
    for content in contents:
        text = content.rstrip().removesuffix("\\")
        if match := _COMMENT.search(text):
            comment = comment or text[match.start() :].strip()
            text = text[: match.start()]
        texts.append(text)
    joined = " ".join(texts).strip()
    if (option := _OPTION.search(joined)) is None:
        return joined, comment, ()
    # Glue `--hash sha256:x` into `--hash=sha256:x` so every option is one token.
    options: list[str] = []
    for token in joined[option.start() :].split():
        if options and not token.startswith("-") and "=" not in options[-1]:
            options[-1] = f"{options[-1]}={token}"
        else:
            options.append(token)
    return joined[: option.start()].strip(), comment, tuple(options)


# The shapes almost every LTS line has (`name[extras]==1.2.3.post4`, `name @ scheme://host/..`)
# are read without packaging, whose import costs more than the rest of a command. The
# patterns accept only text that packaging reads the same way (tests/lts/test_requirements.py
# checks this against packaging); anything else goes through packaging.
NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_FAST = re.compile(
    rf"(?P<name>{NAME})(?:\[(?P<extras>{NAME}(?:,{NAME})*)\])?"
    r"(?:==(?P<version>(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))*"
    r"(?:(?:a|b|rc)(?:0|[1-9][0-9]*))?(?:\.post(?:0|[1-9][0-9]*))?(?:\.dev(?:0|[1-9][0-9]*))?)"
    r"| @ (?P<url>(?:https?|git\+https?|git\+ssh)://[A-Za-z0-9.-]+(?:/[A-Za-z0-9._~/@%+-]*)?))"
)


def read_requirement(text: str) -> Requirement | str:
    """The requirement, or why packaging cannot read it (one line)."""
    if (fast := _FAST.fullmatch(text)) is None:
        return read_with_packaging(text)
    name, extras, version, url = fast.group("name", "extras", "version", "url")
    extras = tuple(sorted(set(extras.split(",")))) if extras else ()
    return Requirement(name, extras, f"=={version}" if version else "", version, url, None)


def read_with_packaging(text: str) -> Requirement | str:
    from packaging.requirements import InvalidRequirement
    from packaging.requirements import Requirement as PackagingRequirement

    try:
        parsed = PackagingRequirement(text)
    except InvalidRequirement as exc:
        return str(exc).splitlines()[0] if str(exc) else "invalid requirement"
    specs = list(parsed.specifier)  # `==1.*` is a range, not a pin
    exact = len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version
    version = specs[0].version if exact else None
    marker = str(parsed.marker) if parsed.marker is not None else None
    extras = tuple(sorted(parsed.extras))
    return Requirement(parsed.name, extras, str(parsed.specifier), version, parsed.url, marker)


def parse(text: str) -> LtsFile:
    lines = split_lines(text)
    pins, problems = [], []
    index = 0
    while index < len(lines):
        start = index
        contents = [lines[index].content]
        # A trailing backslash joins the next line (pip), unless the line is a comment.
        while index + 1 < len(lines) and re.match(r"(?!\s*#).*\\\s*$", lines[index].content):
            index += 1
            contents.append(lines[index].content)
        index += 1
        stripped = contents[0].strip()
        if not stripped or stripped.startswith("#"):
            continue
        requirement, comment, options = _logical_text(contents)
        if requirement.startswith("-") or (not requirement and options):
            problems.append(Problem(start + 1, f"pip option `{stripped}` is not a pin"))
        elif isinstance(parsed := read_requirement(requirement), str):
            problems.append(Problem(start + 1, f"cannot parse `{requirement}`: {parsed}"))
        else:
            where = (start + 1, normalize_name(parsed.name), requirement, comment, options)
            pins.append(Pin(*astuple(parsed) + where))  # Requirement's fields, then Pin's
    return LtsFile(text, lines, pins, problems)


def check(lts: LtsFile) -> list[Problem]:
    """Every problem of the file, in line order: unparsable lines, duplicates, loose pins."""
    problems = list(lts.problems)
    first_seen: dict[str, Pin] = {}
    for pin in lts.pins:
        if (earlier := first_seen.setdefault(pin.key, pin)) is not pin:
            why = f"`{pin.name}` is already pinned on line {earlier.line} (`{earlier.spec}`)"
            problems.append(Problem(pin.line, why))
        if pin.url is None and pin.version is None:
            why = f"is not an exact pin ({pin.specifier or 'no version'}): use {pin.name}==VERSION"
            problems.append(Problem(pin.line, f"`{pin.name}` {why} or a direct URL"))
    return sorted(problems, key=lambda p: p.line)


def load(path: Path, display: str) -> LtsFile:
    if not regular_file(path):
        raise EnvironmentUnusable(
            f"{display}: no LTS requirements file here",
            hint="set lts-requirements in [tool.uvdock] if the repository keeps it elsewhere",
        )
    try:
        return parse(read_text(path))
    except UnicodeDecodeError as exc:
        raise EnvironmentUnusable(f"{display}: not UTF-8 text ({exc.reason})") from exc
