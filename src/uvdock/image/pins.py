"""Base-image pins: find them, check that each lane agrees, and plan a bump.

A lane (`dev`, `lts`) is managed in up to three places: its pin file (one image reference),
the GitLab CI matrix rows whose keys select the lane, and the default of
`ARG FROM_IMAGE_NAME=...` in the lane's Dockerfile. The pin file is the source of truth:
`check` compares every other managed pin with it. Every other `nvcr.io/nvidia/pytorch:<tag>`
in a tracked file is informational: listed, never changed, never an error.

Nothing here prints; the command modules decide what to show and whether to apply. Records
are NamedTuples rather than dataclasses: `image check` runs in pre-commit and CI, and its
start-up time is budgeted (bench/image_check.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from uvdock.errors import InputRefused
from uvdock.image.tags import PREFIX, is_tag
from uvdock.textlines import read_text, split_lines

if TYPE_CHECKING:
    from uvdock.config import Config


LANES = ("dev", "lts")
BASE_IMAGE_KEY = "BASE_IMAGE"
PLATFORM_KEY = "PLATFORM"

_MENTION = re.compile(re.escape(PREFIX) + r"(?P<tag>[A-Za-z0-9_.${}<>\-]+)")
_DOCKERFILE_ARG = re.compile(
    r"""(?P<head>[ \t]*ARG[ \t]+FROM_IMAGE_NAME[ \t]*=[ \t]*)(?P<rest>\S.*)?""", re.IGNORECASE
)


class Pin(NamedTuple):
    path: str  # relative to the repository root, with forward slashes
    line: int  # 1-based
    lane: str | None  # None for an informational mention
    # What follows `nvcr.io/nvidia/pytorch:`, or the whole value when it is no such reference.
    tag: str
    managed: bool
    source: str  # "pin-file", "gitlab", "dockerfile" or "mention"
    value: str = ""  # the image reference as written (without quotes)
    start: int = 0  # span of `value` in the file's text, for managed pins
    end: int = 0
    platform: str = ""  # GitLab rows only

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def well_formed(self) -> bool:
        return self.value.startswith(PREFIX) and is_tag(self.tag)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "lane": self.lane,
            "tag": self.tag,
            "managed": self.managed,
        }


class Finding(NamedTuple):
    kind: str  # drift, malformed, platform-missing, platform-doubled, no-platform,
    #            no-base-image, ambiguous-row, pin-file-missing
    lane: str
    path: str
    line: int | None
    message: str
    tag: str | None = None
    expected: str | None = None

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "lane": self.lane,
            "path": self.path,
            "line": self.line,
            "tag": self.tag,
            "expected": self.expected,
            "message": self.message,
        }


class LaneRules(NamedTuple):
    lane: str
    pin_file: str
    dockerfile: str
    matrix_match: tuple[tuple[str, str], ...]


class Scan(NamedTuple):
    """The managed pins of every lane, the texts they were read from, and structural findings."""

    lanes: list[LaneRules]
    pins: list[Pin]
    findings: list[Finding]
    texts: dict[str, str]  # path -> text as read (CRLF and final newline kept)

    def lane_pins(self, lane: str) -> list[Pin]:
        return [pin for pin in self.pins if pin.lane == lane]

    def pin_file(self, lane: str) -> Pin | None:
        return next((p for p in self.lane_pins(lane) if p.source == "pin-file"), None)


# --- configuration ----------------------------------------------------------------------


def _normalize(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def _match_pairs(entries: Sequence[str], key: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for entry in entries:
        name, sep, value = entry.partition("=")
        if not sep or not name.strip():
            raise InputRefused(f"config `{key}`: expected KEY=VALUE entries, got {entry!r}")
        pairs.append((name.strip(), value.strip()))
    return tuple(pairs)


def lane_rules(config: Config) -> list[LaneRules]:
    return [
        LaneRules(
            "dev",
            _normalize(config.dev_pin_file),
            _normalize(config.dockerfile),
            _match_pairs(config.dev_matrix_match, "dev-matrix-match"),
        ),
        LaneRules(
            "lts",
            _normalize(config.lts_pin_file),
            _normalize(config.lts_dockerfile),
            _match_pairs(config.lts_matrix_match, "lts-matrix-match"),
        ),
    ]


# --- finding managed pins ---------------------------------------------------------------


def _read(repo: Path, path: str, texts: dict[str, str]) -> str | None:
    if path in texts:
        return texts[path]
    try:
        text = read_text(repo / path)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputRefused(f"{path}: cannot be read as UTF-8 text: {exc}") from exc
    texts[path] = text
    return text


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _tag_of(value: str) -> str:
    return value[len(PREFIX) :] if value.startswith(PREFIX) else value


def _managed(
    path: str, text: str, lane: str, source: str, start: int, end: int, **extra: str
) -> Pin:
    value = text[start:end]
    return Pin(
        path, _line_of(text, start), lane, _tag_of(value), True, source, value, start, end, **extra
    )


def _pin_file_pin(path: str, text: str, lane: str) -> Pin:
    stripped = text.lstrip()
    start = len(text) - len(stripped)
    first_line = stripped.split("\n", 1)[0].rstrip()
    return _managed(path, text, lane, "pin-file", start, start + len(first_line))


def _dockerfile_pins(path: str, text: str, lane: str) -> list[Pin]:
    from uvdock.image.gitlab import parse_scalar

    pins = []
    for line in split_lines(text):
        match = _DOCKERFILE_ARG.fullmatch(line.content)
        if match is None or match["rest"] is None:
            continue  # a bare `ARG FROM_IMAGE_NAME` is no pin: the build passes the value
        parsed = parse_scalar(match["rest"], line.offset + match.start("rest"))
        if parsed is not None:
            pins.append(_managed(path, text, lane, "dockerfile", parsed[1], parsed[2]))
    return pins


def _gitlab_rows(path: str, text: str, scan: Scan) -> dict[str, list[tuple[int, Pin]]]:
    """Each lane's matrix rows: (line of the row, pin of its BASE_IMAGE). Adds findings to scan."""
    from uvdock.image.gitlab import sequence_items

    rows: dict[str, list[tuple[int, Pin]]] = {rule.lane: [] for rule in scan.lanes}
    for item in sequence_items(text):
        lanes = [
            rule.lane
            for rule in scan.lanes
            if any(
                item.fields.get(key) is not None and item.fields[key].value == value
                for key, value in rule.matrix_match
            )
        ]
        if not lanes:
            continue
        if len(lanes) > 1:
            scan.findings.append(
                Finding(
                    "ambiguous-row",
                    lanes[0],
                    path,
                    item.line,
                    f"matrix row matches the rules of several lanes ({', '.join(lanes)})",
                )
            )
            continue
        lane = lanes[0]
        base = item.fields.get(BASE_IMAGE_KEY)
        if base is None:
            scan.findings.append(
                Finding(
                    "no-base-image",
                    lane,
                    path,
                    item.line,
                    f"{lane} matrix row has no {BASE_IMAGE_KEY}",
                )
            )
            continue
        platform = item.fields.get(PLATFORM_KEY)
        pin = _managed(
            path,
            text,
            lane,
            "gitlab",
            base.start,
            base.end,
            platform=platform.value if platform else "",
        )
        rows[lane].append((item.line, pin))
        scan.pins.append(pin)
        if platform is None:
            scan.findings.append(
                Finding(
                    "no-platform", lane, path, item.line, f"{lane} matrix row has no {PLATFORM_KEY}"
                )
            )
    return rows


def _platform_findings(
    path: str, lane: str, rows: list[tuple[int, Pin]], platforms: Sequence[str]
) -> list[Finding]:
    """One row per configured platform: name each missing and each doubled one."""
    findings = []
    first_line = rows[0][0] if rows else None
    for platform in platforms:
        matching = [line for line, pin in rows if pin.platform == platform]
        if not matching:
            findings.append(
                Finding(
                    "platform-missing",
                    lane,
                    path,
                    first_line,
                    f"no {lane} matrix row for platform {platform}",
                )
            )
        for extra in matching[1:]:
            findings.append(
                Finding(
                    "platform-doubled",
                    lane,
                    path,
                    extra,
                    f"second {lane} matrix row for platform {platform} "
                    f"(first at line {matching[0]})",
                )
            )
    return findings


def scan_managed(repo: Path, config: Config) -> Scan:
    """Read every lane's managed pins from the working tree."""
    scan = Scan(lane_rules(config), [], [], {})
    for rule in scan.lanes:
        text = _read(repo, rule.pin_file, scan.texts)
        if text is not None:
            scan.pins.append(_pin_file_pin(rule.pin_file, text, rule.lane))
        dockerfile = _read(repo, rule.dockerfile, scan.texts)
        if dockerfile is not None:
            scan.pins.extend(_dockerfile_pins(rule.dockerfile, dockerfile, rule.lane))
    gitlab_file = _normalize(config.gitlab_build_file)
    gitlab = _read(repo, gitlab_file, scan.texts)
    if gitlab is not None:
        rows = _gitlab_rows(gitlab_file, gitlab, scan)
        for rule in scan.lanes:
            # A lane with neither a pin file nor CI rows is simply not used in this repository.
            if rows[rule.lane] or scan.pin_file(rule.lane) is not None:
                scan.findings.extend(
                    _platform_findings(gitlab_file, rule.lane, rows[rule.lane], config.platforms)
                )
    for rule in scan.lanes:
        if scan.pin_file(rule.lane) is None and scan.lane_pins(rule.lane):
            scan.findings.append(
                Finding(
                    "pin-file-missing",
                    rule.lane,
                    rule.pin_file,
                    None,
                    f"{rule.lane} pins exist but the pin file {rule.pin_file} does not",
                )
            )
    scan.pins.sort(key=lambda p: (p.path, p.line))
    return scan


# --- informational mentions -------------------------------------------------------------


def find_mentions(repo: Path, managed: Iterable[Pin]) -> list[Pin]:
    """Every other `nvcr.io/nvidia/pytorch:<tag>` in a tracked file (one `git grep`)."""
    from uvdock.run import git

    taken = {(pin.path, pin.line) for pin in managed}
    mentions = []
    for path, line, text in git.grep_files(repo, PREFIX):
        if (path, line) in taken:
            continue
        for match in _MENTION.finditer(text):
            mentions.append(Pin(path, line, None, match["tag"], False, "mention", match[0]))
    return mentions


def all_pins(repo: Path, config: Config) -> tuple[Scan, list[Pin]]:
    scan = scan_managed(repo, config)
    pins = scan.pins + find_mentions(repo, scan.pins)
    pins.sort(key=lambda p: (not p.managed, p.path, p.line))
    return scan, pins


# --- check ------------------------------------------------------------------------------


def expected_tag(scan: Scan, lane: str) -> str | None:
    pin = scan.pin_file(lane)
    return pin.tag if pin is not None and pin.well_formed else None


def check(scan: Scan) -> list[Finding]:
    """Malformed and disagreeing managed pins, then the structural findings of the scan."""
    findings: list[Finding] = []
    for rule in scan.lanes:
        expected = expected_tag(scan, rule.lane)
        for pin in scan.lane_pins(rule.lane):
            if not pin.well_formed:
                findings.append(
                    Finding(
                        "malformed",
                        rule.lane,
                        pin.path,
                        pin.line,
                        f"{rule.lane} pin `{pin.value}` is not {PREFIX}YY.MM-py3",
                        tag=pin.tag,
                        expected=expected,
                    )
                )
            elif expected is not None and pin.tag != expected:
                findings.append(
                    Finding(
                        "drift",
                        rule.lane,
                        pin.path,
                        pin.line,
                        f"{rule.lane} pin is {pin.tag}, expected {expected} (from {rule.pin_file})",
                        tag=pin.tag,
                        expected=expected,
                    )
                )
    findings.extend(scan.findings)
    findings.sort(
        key=lambda f: (LANES.index(f.lane) if f.lane in LANES else 9, f.path, f.line or 0)
    )
    return findings
