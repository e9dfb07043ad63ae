"""Base-image pins: what a pin is, which lanes exist, and whether each lane agrees.

A lane (`dev`, `lts`) is managed in up to three places: its pin file (one image reference),
the GitLab CI matrix rows that satisfy one of the lane's KEY=VALUE sets in full, and the default of
`ARG FROM_IMAGE_NAME=...` in the lane's Dockerfile. The pin file is the source of truth:
`check` compares every other managed pin with it. Every other `nvcr.io/nvidia/pytorch:<tag>`
in a tracked file is informational: listed, never changed, never an error.

image/scan.py reads the managed pins, image/bump.py plans a bump; the commands grep for the
informational mentions and pass the lines in.

Nothing here prints; the command modules decide what to show and whether to apply. Records
are NamedTuples rather than dataclasses: `image check` runs in pre-commit and CI, and its
start-up time is budgeted (bench/image_check.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from uvdock.errors import InputRefused
from uvdock.registry.tags import PREFIX, is_tag, parse_image, tag_key

if TYPE_CHECKING:
    from uvdock.config.settings import Config


LANES = ("dev", "lts")
# A managed pin written in a shape the span editor cannot change exactly (check: a finding;
# bump: refused, exit 2, naming file and line).
UNSUPPORTED_SHAPE = "unsupported-shape"
BASE_IMAGE_KEY = "BASE_IMAGE"
PLATFORM_KEY = "PLATFORM"

_MENTION = re.compile(re.escape(PREFIX) + r"(?P<tag>[A-Za-z0-9_.${}<>\-]+)")


# One line of `git grep -n`: (path relative to the repository, 1-based line, the line's text).
GrepHit = tuple[str, int, str]


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
    note: str = ""  # why an unrecognised reference is no lane's

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def well_formed(self) -> bool:
        return self.value.startswith(PREFIX) and is_tag(self.tag)

    def to_json(self) -> dict[str, Any]:
        found = {
            "path": self.path,
            "line": self.line,
            "lane": self.lane,
            "tag": self.tag,
            "managed": self.managed,
            "kind": kind_of(self),
        }
        return {**found, "why": self.note} if self.note else found


def kind_of(pin: Pin) -> str:
    """managed, unclassified (a matrix row no lane's rule selects), unmanaged (a base no lane
    manages, with why) or informational."""
    if pin.managed:
        return "managed"
    if pin.source == "unrecognised":
        return "unmanaged"
    return "unclassified" if pin.source == "gitlab" else "informational"


class Finding(NamedTuple):
    kind: str  # drift, malformed, platform-missing, platform-doubled, no-platform,
    #            no-base-image, ambiguous-row, pin-file-missing, pin-file-content,
    #            file-missing (a path the configuration names), no-managed-pin
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


# One alternative of a lane's matrix rule: every (KEY, VALUE) must hold for a row.
MatchSet = tuple[tuple[str, str], ...]


class LaneRules(NamedTuple):
    lane: str
    pin_file: str  # "" when the configuration says the lane has none (the lane does not exist)
    dockerfile: str  # "" when the lane has no Dockerfile of its own
    matrix_match: tuple[MatchSet, ...]  # a row belongs to the lane when one set holds in full
    # The paths the configuration named explicitly (not left at uvdock's defaults).
    configured: tuple[str, ...] = ()
    # Lanes found by meaning (image/lanes.py): the ARG whose default is the base ("FROM":
    # the image written in the FROM line). "" for the configured lanes (dev, lts).
    arg: str = ""

    @property
    def exists(self) -> bool:
        return bool(self.pin_file)

    def selects(self, fields: Mapping[str, str]) -> bool:
        """All entries of one alternative hold; `KEY=` (no value) holds when KEY is absent."""
        return any(
            all(fields.get(key, "") == value for key, value in alternative)
            for alternative in self.matrix_match
        )


class Scan(NamedTuple):
    """The managed pins of every lane, the texts they were read from, and structural findings."""

    lanes: list[LaneRules]
    pins: list[Pin]
    findings: list[Finding]
    texts: dict[str, str]  # path -> text as read (CRLF and final newline kept)
    # Matrix rows naming an NGC PyTorch image that no lane's rule selects (source "gitlab").
    unclassified: list[Pin]

    def lane_pins(self, lane: str) -> list[Pin]:
        return [pin for pin in self.pins if pin.lane == lane]

    def pin_file(self, lane: str) -> Pin | None:
        return next((p for p in self.lane_pins(lane) if p.source == "pin-file"), None)


# --- configuration ----------------------------------------------------------------------


def normalize_path(path: str) -> str:
    """A configured path as the scan names files: relative, normalised, forward slashes."""
    return os.path.normpath(path).replace(os.sep, "/")


def _entry(text: str, key: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise InputRefused(
            f"config `{key}`: expected KEY=VALUE entries, got {text!r}",
            hint=f'e.g. {key} = ["FILE=Dockerfile.ci.dev, IMAGE_TYPE=dev"]',
        )
    return name.strip(), value.strip()


def match_sets(entries: Sequence[str], key: str) -> tuple[MatchSet, ...]:
    """A `*-matrix-match` list as alternative sets of KEY=VALUE entries.

    Each element that joins entries with commas is one set, and then every element is its own
    set (`["FILE=Dockerfile.ci.lts", "FILE=Dockerfile.ci.dev, IMAGE_TYPE=lts"]`: two sets).
    A list of single entries, the original form, is one set: all of them must hold.
    """
    if not any("," in entry for entry in entries):
        return (tuple(_entry(entry, key) for entry in entries),) if entries else ()
    return tuple(
        tuple(_entry(part, key) for part in entry.split(",") if part.strip())
        for entry in entries
        if entry.strip()
    )


def _explicit(config: Config, *names: str) -> tuple[str, ...]:
    """The named path settings whose value differs from uvdock's built-in default."""
    defaults = type(config)._field_defaults
    return tuple(
        normalize_path(getattr(config, name))
        for name in names
        if getattr(config, name) and getattr(config, name) != defaults.get(name)
    )


def _path(value: str) -> str:
    return normalize_path(value) if value.strip() else ""


def lane_rules(config: Config) -> list[LaneRules]:
    return [
        LaneRules(
            "dev",
            _path(config.dev_pin_file),
            _path(config.dockerfile),
            match_sets(config.dev_matrix_match, "dev-matrix-match"),
            _explicit(config, "dev_pin_file", "dockerfile"),
        ),
        LaneRules(
            "lts",
            _path(config.lts_pin_file),
            _path(config.lts_dockerfile),
            match_sets(config.lts_matrix_match, "lts-matrix-match"),
            _explicit(config, "lts_pin_file", "lts_dockerfile"),
        ),
    ]


def configured_gitlab_file(config: Config) -> tuple[str, bool]:
    """The GitLab build file ("" for none) and whether the configuration named it explicitly."""
    explicit = bool(_explicit(config, "gitlab_build_file"))
    return _path(config.gitlab_build_file), explicit


# --- informational mentions -------------------------------------------------------------


def find_mentions(managed: Iterable[Pin], grep_hits: Iterable[GrepHit]) -> list[Pin]:
    """Every other `nvcr.io/nvidia/pytorch:<tag>` among the tracked lines that mention PREFIX,
    once per line and tag; a placeholder (a tag that starts with neither a digit nor `$`) is
    none.

    The caller greps (one `git grep -F PREFIX`); the domain code never starts a process.
    """
    taken = {(pin.path, pin.line) for pin in managed}
    mentions = []
    for path, line, text in grep_hits:
        if (path, line) in taken:
            continue
        seen: set[str] = set()
        for match in _MENTION.finditer(text):
            tag = match["tag"].rstrip(".")  # the end of a sentence is not the tag's
            # A tag or a variable holding one; `YY.MM-py3`, `<YY.MM>-py3` are docs' placeholders.
            if tag in seen or not (tag[:1].isdigit() or tag.startswith("$")):
                continue
            seen.add(tag)
            mentions.append(Pin(path, line, None, tag, False, "mention", PREFIX + tag))
    return mentions


def all_pins(managed: Sequence[Pin], grep_hits: Iterable[GrepHit]) -> list[Pin]:
    """The managed pins, then the informational mentions, each in path and line order."""
    pins = [*managed, *find_mentions(managed, grep_hits)]
    pins.sort(key=lambda p: (not p.managed, p.source != "gitlab", p.path, p.line))
    return pins


# --- check ------------------------------------------------------------------------------


def expected_tag(scan: Scan, lane: str) -> str | None:
    pin = scan.pin_file(lane)
    return pin.tag if pin is not None and pin.well_formed else None


def reference_tag(scan: Scan, lane: str) -> tuple[str | None, str]:
    """The tag the lane's pins should carry, and where it comes from.

    The pin file when there is one; otherwise (Megatron-LM before its pin files) the tag most
    of the lane's well-formed pins carry, the newest on a tie.
    """
    rule = next(r for r in scan.lanes if r.lane == lane)
    if rule.arg:
        return _found_reference(scan, rule)
    expected = expected_tag(scan, lane)
    if expected is not None:
        return expected, rule.pin_file
    tags = [pin.tag for pin in scan.lane_pins(lane) if pin.well_formed]
    if not tags:
        return None, ""
    best = max(set(tags), key=lambda tag: (tags.count(tag), tag_key(tag)))
    return best, f"most of the {lane} pins; there is no pin file"


def _found_reference(scan: Scan, rule: LaneRules) -> tuple[str | None, str]:
    """A found lane's reference: what its Dockerfile says (the ARG default, or the FROM image),
    else what most of its CI build arguments say."""
    pins = scan.lane_pins(rule.lane)
    own = [pin for pin in pins if pin.source == "dockerfile"]
    if own:
        where = f"ARG {rule.arg}" if rule.arg != "FROM" else "FROM"
        return own[-1].value, f"{where} in {own[-1].location}"
    values = [pin.value for pin in pins]
    if not values:
        return None, ""
    return max(values, key=values.count), f"most of the {rule.lane} references"


def _found_findings(scan: Scan, rule: LaneRules) -> list[Finding]:
    """Each reference of a found lane that is no orderable image, or another than the lane's."""
    expected, source = _found_reference(scan, rule)
    findings: list[Finding] = []
    for pin in scan.lane_pins(rule.lane):
        image, why = parse_image(pin.value)
        if image is None:
            message = f"{rule.lane} reference `{pin.value}`: {why}"
            findings.append(Finding("malformed", rule.lane, pin.path, pin.line, message,
                                    tag=pin.tag, expected=expected))  # fmt: skip
        elif expected is not None and pin.value != expected:
            message = f"{rule.lane} is {pin.value}, expected {expected} (from {source})"
            findings.append(Finding("drift", rule.lane, pin.path, pin.line, message,
                                    tag=pin.tag, expected=expected))  # fmt: skip
    return findings


def check(scan: Scan) -> list[Finding]:
    """Malformed and disagreeing managed pins, then the structural findings of the scan."""
    findings: list[Finding] = []
    for rule in scan.lanes:
        if rule.arg:
            findings.extend(_found_findings(scan, rule))
            continue
        expected, source = reference_tag(scan, rule.lane)
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
                        f"{rule.lane} pin is {pin.tag}, expected {expected} (from {source})",
                        tag=pin.tag,
                        expected=expected,
                    )
                )
    findings.extend(scan.findings)
    findings.sort(
        key=lambda f: (LANES.index(f.lane) if f.lane in LANES else 9, f.path, f.line or 0)
    )
    return findings
