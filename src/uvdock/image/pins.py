"""Base-image pins: what a pin is, which lanes exist, and whether each lane agrees. A lane's
pin file is its source of truth; other mentions are informational. Records are NamedTuples:
`image check` runs in pre-commit and CI on a start-up budget."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from uvdock.errors import InputRefused
from uvdock.image.dockerfile import line_of
from uvdock.registry.tags import PREFIX, is_tag, parse_image, tag_key

if TYPE_CHECKING:
    from uvdock.config.settings import Config
    from uvdock.image.ci_builds import Build


# Each lane's configuration keys: its pin file, its Dockerfile, its matrix rule.
LANE_KEYS = {
    "dev": ("dev_pin_file", "dockerfile", "dev_matrix_match"),
    "lts": ("lts_pin_file", "lts_dockerfile", "lts_matrix_match"),
}
# A managed pin in a shape the span editor cannot edit exactly: a check finding, a bump refusal.
UNSUPPORTED_SHAPE = "unsupported-shape"
# A tracked managed file absent from the work tree (sparse checkout): check fails, bump refuses.
NOT_CHECKED_OUT = "not-checked-out"
BASE_IMAGE_KEY = "BASE_IMAGE"
PLATFORM_KEY = "PLATFORM"

_MENTION = re.compile(re.escape(PREFIX) + r"(?P<tag>[A-Za-z0-9_.${}<>\-]+)")


class Pin(NamedTuple):
    path: str  # relative to the repository root, with forward slashes
    line: int  # 1-based
    lane: str | None  # None for an informational mention
    # What follows `nvcr.io/nvidia/pytorch:`, or the whole value when it is no such reference.
    tag: str
    managed: bool
    source: str  # pin-file, gitlab, dockerfile, workflow, script, mention or unrecognised
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
        found = {k: getattr(self, k) for k in ("path", "line", "lane", "tag", "managed")}
        found["kind"] = kind_of(self)
        return {**found, "why": self.note} if self.note else found


def kind_of(pin: Pin) -> str:
    """managed, unclassified (a row no lane selects), unmanaged (with why) or informational."""
    if pin.managed:
        return "managed"
    return {"unrecognised": "unmanaged", "gitlab": "unclassified"}.get(pin.source, "informational")


class Finding(NamedTuple):
    kind: str  # drift, malformed, platform-missing, no-managed-pin, ...
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
        keys = ("kind", "lane", "path", "line", "tag", "expected", "message")
        return {k: getattr(self, k) for k in keys}


# One alternative of a lane's matrix rule: every (KEY, VALUE) must hold for a row.
MatchSet = tuple[tuple[str, str], ...]


class LaneRules(NamedTuple):
    lane: str
    pin_file: str  # "" when the configuration says the lane has none (the lane does not exist)
    dockerfile: str  # "" when the lane has no Dockerfile of its own
    matrix_match: tuple[MatchSet, ...]  # a row belongs to the lane when one set holds in full
    configured: tuple[str, ...] = ()  # the paths the configuration named, not left at defaults
    arg: str = ""  # a found lane (image/lanes.py): the ARG whose default is its base, or FROM

    def selects(self, fields: Mapping[str, str]) -> bool:
        # All entries of one alternative hold; `KEY=` (no value) holds when KEY is absent.
        return any(all(fields.get(k, "") == v for k, v in alt) for alt in self.matrix_match)


class Scan(NamedTuple):
    lanes: list[LaneRules]
    pins: list[Pin]
    findings: list[Finding]
    texts: dict[str, str]  # path -> text as read (CRLF and final newline kept)
    unclassified: list[Pin]  # matrix rows with an NGC image no lane selects, unmanaged bases
    builds: list[Build]  # the CI builds of the repository's Dockerfiles (image/lanes.py)

    def lane_pins(self, lane: str) -> list[Pin]:
        return [pin for pin in self.pins if pin.lane == lane]

    def pin_file(self, lane: str) -> Pin | None:
        return next((p for p in self.lane_pins(lane) if p.source == "pin-file"), None)


def managed_pin(
    path: str, text: str, lane: str, source: str, start: int, end: int, **extra: str
) -> Pin:
    value = text[start:end]
    tag = value.removeprefix(PREFIX)
    return Pin(path, line_of(text, start), lane, tag, True, source, value, start, end, **extra)


def pin_file_pin(path: str, text: str, lane: str) -> Pin | Finding:
    """The one image reference a pin file holds (blank space and a BOM around it allowed), or
    why it does not hold exactly one: a bump refuses to guess which line is the pin."""
    body = text.removeprefix("\ufeff")
    stripped = body.strip()
    words = stripped.split()
    if len(words) == 1:
        begin = len(text) - len(body.lstrip())
        return managed_pin(path, text, lane, "pin-file", begin, begin + len(stripped))
    if not words:
        problem = "is empty"
    elif any(line.startswith(("<<<<<<<", "=======", ">>>>>>>")) for line in body.splitlines()):
        problem = "holds merge-conflict markers"
    elif stripped.startswith("#"):
        problem = "starts with a comment"
    else:
        problem = f"holds {len(words)} words on {len(stripped.splitlines())} line(s)"
    message = f"{lane} pin file {problem}; it must hold exactly one image reference"
    return Finding("pin-file-content", lane, path, 1, message)


def normalize_path(path: str) -> str:
    """A configured path as the scan names files: normalised, forward slashes, "" for blank."""
    return os.path.normpath(path).replace(os.sep, "/") if path.strip() else ""


def _entry(text: str, key: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise InputRefused(
            f"config `{key}`: expected KEY=VALUE entries, got {text!r}",
            hint=f'e.g. {key} = ["FILE=Dockerfile.ci.dev, IMAGE_TYPE=dev"]',
        )
    return name.strip(), value.strip()


def match_sets(entries: Sequence[str], key: str) -> tuple[MatchSet, ...]:
    """Alternative KEY=VALUE sets: with commas, one per element; else the list is one set."""
    if not any("," in entry for entry in entries):
        return (tuple(_entry(entry, key) for entry in entries),) if entries else ()
    return tuple(
        tuple(_entry(part, key) for part in entry.split(",") if part.strip())
        for entry in entries
        if entry.strip()
    )


def _explicit(config: Config, *names: str) -> tuple[str, ...]:
    defaults = type(config)._field_defaults
    values = {name: getattr(config, name) for name in names}
    return tuple(normalize_path(v) for n, v in values.items() if v and v != defaults.get(n))


def lane_rules(config: Config) -> list[LaneRules]:
    rules = []
    for lane, (*keys, matrix_key) in LANE_KEYS.items():
        pin_file, dockerfile = (normalize_path(getattr(config, key)) for key in keys)
        matrix = match_sets(getattr(config, matrix_key), matrix_key.replace("_", "-"))
        rules.append(LaneRules(lane, pin_file, dockerfile, matrix, _explicit(config, *keys)))
    return rules


def configured_gitlab_file(config: Config) -> tuple[str, bool]:
    """The GitLab build file ("" for none) and whether the configuration named it explicitly."""
    return normalize_path(config.gitlab_build_file), bool(_explicit(config, "gitlab_build_file"))


def all_pins(managed: Sequence[Pin], grep_hits: Iterable[tuple[str, int, str]]) -> list[Pin]:
    """The managed pins, then each other PREFIX<tag> of the `git grep -n` hits, once a line."""
    taken = {(pin.path, pin.line) for pin in managed}
    pins = list(managed)
    for path, line, text in grep_hits:
        # A tag (a sentence's final dot dropped) or a variable; `YY.MM-py3` is a placeholder.
        tags = dict.fromkeys(m["tag"].rstrip(".") for m in _MENTION.finditer(text))
        found = [tag for tag in tags if tag[:1].isdigit() or tag.startswith("$")]
        if (path, line) not in taken:
            pins += [Pin(path, line, None, tag, False, "mention", PREFIX + tag) for tag in found]
    pins.sort(key=lambda p: (not p.managed, p.source != "gitlab", p.path, p.line))
    return pins


def expected_tag(scan: Scan, lane: str) -> str | None:
    pin = scan.pin_file(lane)
    return pin.tag if pin is not None and pin.well_formed else None


def reference_tag(scan: Scan, lane: str) -> tuple[str | None, str]:
    """The tag (a found lane: the reference) the lane's pins should carry, and where it comes
    from: the pin file (a found lane: its Dockerfile), else what most pins carry."""
    rule = next(r for r in scan.lanes if r.lane == lane)
    pins = scan.lane_pins(lane)
    if rule.arg:
        if own := [pin for pin in pins if pin.source == "dockerfile"]:
            where = f"ARG {rule.arg}" if rule.arg != "FROM" else "FROM"
            return own[-1].value, f"{where} in {own[-1].location}"
        values = [pin.value for pin in pins]
        return max(values, key=values.count, default=None), f"most of the {lane} references"
    if (expected := expected_tag(scan, lane)) is not None:
        return expected, rule.pin_file
    tags = [pin.tag for pin in pins if pin.well_formed]
    best = max(set(tags), key=lambda tag: (tags.count(tag), tag_key(tag)), default=None)
    return best, f"most of the {lane} pins; there is no pin file"


def check(scan: Scan) -> list[Finding]:
    findings: list[Finding] = []
    for rule in scan.lanes:
        lane = rule.lane
        expected, source = reference_tag(scan, lane)
        for pin in scan.lane_pins(lane):
            if rule.arg:  # a found lane: whole references, of any orderable image
                now, what, why = pin.value, lane, parse_image(pin.value)[1]
                bad = f"{lane} reference `{pin.value}`: {why}" if why else ""
            else:
                now, what = pin.tag, f"{lane} pin"
                bad = "" if pin.well_formed else f"{what} `{pin.value}` is not {PREFIX}YY.MM-py3"
            if bad or (expected is not None and now != expected):
                message = bad or f"{what} is {now}, expected {expected} (from {source})"
                kind = "malformed" if bad else "drift"
                findings.append(Finding(kind, lane, pin.path, pin.line, message, pin.tag, expected))
    findings.extend(scan.findings)
    order = {lane: index for index, lane in enumerate(LANE_KEYS)}
    findings.sort(key=lambda f: (order.get(f.lane, 9), f.path, f.line or 0))
    return findings
