"""Read each lane's managed base-image pins from the working tree: pin file, Dockerfile, matrix.

The pin file holds one image reference; the Dockerfile the default of
`ARG FROM_IMAGE_NAME=...`; the GitLab build file the matrix rows whose keys select the lane
(one per configured platform). Every pin keeps the span of its value in the text, so a bump
replaces that and nothing else. Structural problems (missing platform, ambiguous row, ...)
become findings; whether the tags agree is pins.check's business.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import InputRefused
from uvdock.image.pins import (
    BASE_IMAGE_KEY,
    PLATFORM_KEY,
    Finding,
    LaneRules,
    Pin,
    Scan,
    lane_rules,
    normalize_path,
)
from uvdock.image.tags import PREFIX
from uvdock.textlines import read_text, split_lines

if TYPE_CHECKING:
    from uvdock.config import Config
    from uvdock.image.gitlab import Item

_DOCKERFILE_ARG = re.compile(
    r"""(?P<head>[ \t]*ARG[ \t]+FROM_IMAGE_NAME[ \t]*=[ \t]*)(?P<rest>\S.*)?""", re.IGNORECASE
)


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
    stripped = text.lstrip("\ufeff").lstrip()  # a UTF-8 byte order mark is no part of the pin
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


def _lanes_of(item: Item, rules: Sequence[LaneRules]) -> list[str]:
    """The lanes whose matrix-match rules select this row (any one KEY=VALUE pair selects)."""
    return [
        rule.lane
        for rule in rules
        if any(
            item.fields.get(key) is not None and item.fields[key].value == value
            for key, value in rule.matrix_match
        )
    ]


def _gitlab_rows(path: str, text: str, scan: Scan) -> dict[str, list[tuple[int, Pin]]]:
    """Each lane's matrix rows: (line of the row, pin of its BASE_IMAGE). Adds findings to scan."""
    from uvdock.image.gitlab import sequence_items

    rows: dict[str, list[tuple[int, Pin]]] = {rule.lane: [] for rule in scan.lanes}
    for item in sequence_items(text):
        lanes = _lanes_of(item, scan.lanes)
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
    gitlab_file = normalize_path(config.gitlab_build_file)
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
