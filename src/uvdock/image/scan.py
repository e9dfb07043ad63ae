"""Read each lane's managed base-image pins from the working tree: pin file, Dockerfile, matrix.

The pin file holds one image reference; the Dockerfile the default of
`ARG FROM_IMAGE_NAME=...`; the GitLab build file the matrix rows whose keys select the lane
(one per configured platform). Every pin keeps the span of its value in the text, so a bump
replaces that and nothing else. Structural problems (missing platform, ambiguous row, ...)
become findings; whether the tags agree is pins.check's business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import InputRefused
from uvdock.files.textlines import read_text
from uvdock.image.pin_file import managed_pin as _managed
from uvdock.image.pin_file import pin_file_pin as _pin_file_pin
from uvdock.image.pins import (
    BASE_IMAGE_KEY,
    PLATFORM_KEY,
    UNSUPPORTED_SHAPE,
    Finding,
    LaneRules,
    Pin,
    Scan,
    configured_gitlab_file,
    lane_rules,
)
from uvdock.registry.tags import PREFIX

if TYPE_CHECKING:
    from uvdock.config.settings import Config
    from uvdock.image.gitlab import Item

# A managed file git tracks that is absent from the work tree (a sparse checkout): its pins
# can be neither checked nor bumped, so check fails and bump refuses.
NOT_CHECKED_OUT = "not-checked-out"


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


def _dockerfile_pins(path: str, text: str, lane: str) -> tuple[list[Pin], list[Finding]]:
    """The defaults of `ARG FROM_IMAGE_NAME=...` as Docker reads them (see image/dockerfile.py).

    A bare `ARG FROM_IMAGE_NAME` is no pin: the build passes the value. A default uvdock
    cannot edit exactly is an `unsupported-shape` finding: check reports it, bump refuses.
    """
    from uvdock.image.dockerfile import arg_defaults

    defaults, problems = arg_defaults(text, "FROM_IMAGE_NAME")
    pins = [_managed(path, text, lane, "dockerfile", d.start, d.end) for d in defaults]
    findings = [Finding(UNSUPPORTED_SHAPE, lane, path, p.line, p.message) for p in problems]
    return pins, findings


def _lanes_of(item: Item, rules: Sequence[LaneRules]) -> list[str]:
    """The lanes one of whose alternative KEY=VALUE sets this row satisfies in full."""
    fields = {key: scalar.value for key, scalar in item.fields.items()}
    return [rule.lane for rule in rules if rule.selects(fields)]


def _gitlab_rows(path: str, text: str, scan: Scan) -> dict[str, list[tuple[int, Pin]]]:
    """Each lane's matrix rows: (line of the row, pin of its BASE_IMAGE). Adds findings to scan."""
    from uvdock.image.gitlab import sequence_items

    rows: dict[str, list[tuple[int, Pin]]] = {rule.lane: [] for rule in scan.lanes}
    for item in sequence_items(text):
        lanes = _lanes_of(item, scan.lanes)
        if not lanes:
            base = item.fields.get(BASE_IMAGE_KEY)
            if base is not None and base.value.startswith(PREFIX):
                pin = _managed(path, text, "", "gitlab", base.start, base.end)
                scan.unclassified.append(pin._replace(lane=None, managed=False))
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
    return rows


def _platform_findings(
    path: str, lane: str, rows: list[tuple[int, Pin]], platforms: Sequence[str]
) -> list[Finding]:
    """One row per configured platform, or a single row when the lane names no platform."""
    if rows and not any(pin.platform for _, pin in rows):
        # Built for one platform only (Megatron-LM until 2026): one row is the whole lane.
        return [
            Finding(
                "platform-doubled",
                lane,
                path,
                line,
                f"second {lane} matrix row without {PLATFORM_KEY} (first at line {rows[0][0]})",
            )
            for line, _ in rows[1:]
        ]
    findings = [
        Finding("no-platform", lane, path, line, f"{lane} matrix row has no {PLATFORM_KEY}")
        for line, pin in rows
        if not pin.platform
    ]
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


def _missing(lane: str, path: str, setting: str) -> Finding:
    return Finding(
        "file-missing",
        lane,
        path,
        None,
        f"{path} does not exist (set as `{setting}`); check the path",
    )


def _read_lane_files(repo: Path, rule: LaneRules, scan: Scan) -> None:
    """The lane's pin file and Dockerfile pins; a file named explicitly must exist."""
    dockerfile_key = "dockerfile" if rule.lane == "dev" else f"{rule.lane}-dockerfile"
    for path, setting in (
        (rule.pin_file, f"{rule.lane}-pin-file"),
        (rule.dockerfile, dockerfile_key),
    ):
        if not path:
            continue
        text = _read(repo, path, scan.texts)
        if text is None:
            if path in rule.configured:
                scan.findings.append(_missing(rule.lane, path, setting))
            continue
        if path == rule.dockerfile:
            pins, findings = _dockerfile_pins(path, text, rule.lane)
            scan.pins.extend(pins)
            scan.findings.extend(findings)
            continue
        found = _pin_file_pin(path, text, rule.lane)
        if isinstance(found, Pin):
            scan.pins.append(found)
        else:
            scan.findings.append(found)


def _lane_findings(rule: LaneRules, scan: Scan, pin_files: set[str]) -> list[Finding]:
    """A lane needs a managed pin, and its own pin file when another lane has one."""
    if any(f.lane == rule.lane and f.kind == "file-missing" for f in scan.findings):
        return []  # already named: the misspelt path is the cause
    has_pin_file = rule.pin_file in pin_files
    if scan.lane_pins(rule.lane) or has_pin_file:
        if rule.pin_file and not has_pin_file and pin_files - {rule.pin_file}:
            return [
                Finding(
                    "pin-file-missing",
                    rule.lane,
                    rule.pin_file,
                    None,
                    f"{rule.lane} pins exist and so do other lanes' pin files, but"
                    f" {rule.pin_file} does not",
                )
            ]
        return []
    if not rule.pin_file:
        return []  # `<lane>-pin-file = ""`: the configuration says the lane does not exist
    return [
        Finding(
            "no-managed-pin",
            rule.lane,
            rule.pin_file,
            None,
            f"the {rule.lane} lane has no managed pin: no {rule.pin_file}"
            + (f", no default in {rule.dockerfile}" if rule.dockerfile else "")
            + f', no matrix row (`{rule.lane}-matrix-match`); set `{rule.lane}-pin-file = ""`'
            " if this repository has no such lane",
        )
    ]


def managed_paths(config: Config) -> list[str]:
    """Every file that holds managed pins: pin files, Dockerfiles, the GitLab build file."""
    paths = [p for rule in lane_rules(config) for p in (rule.pin_file, rule.dockerfile)]
    paths.append(configured_gitlab_file(config)[0])
    return sorted({p for p in paths if p})


def _absent_message(path: str, sparse: bool) -> str:
    """Why the file is missing decides the way back: `sparse-checkout add` fails outside one."""
    if sparse:
        how = f"bring it back with `git sparse-checkout add {path.rpartition('/')[0] or path}`"
        return f"{_ABSENT} (left out by the sparse checkout): {_UNREADABLE}; {how}"
    return (
        f"{_ABSENT} (deleted, the deletion not committed): {_UNREADABLE};"
        f" restore it with `git restore -- {path}`, or commit its removal"
    )


_ABSENT = "tracked by git but absent from the work tree"
_UNREADABLE = "its pins can be neither checked nor bumped"


def _not_checked_out(scan: Scan, absent_tracked: Mapping[str, bool]) -> None:
    """Name each tracked managed file the work tree lacks, instead of what its absence implies."""
    scan.findings[:] = [f for f in scan.findings if f.path not in absent_tracked]
    for path, sparse in sorted(absent_tracked.items()):
        lanes = [r.lane for r in scan.lanes if path in (r.pin_file, r.dockerfile)] or [""]
        message = _absent_message(path, sparse)
        scan.findings.extend(Finding(NOT_CHECKED_OUT, lane, path, None, message) for lane in lanes)


def _read_workflows(repo: Path, config: Config, scan: Scan) -> None:
    """GitHub workflow steps that build a lane's Dockerfile with a hard-coded base image."""
    from uvdock.image.workflows import workflow_files, workflow_pins

    for path in workflow_files(repo, config.workflow_files):
        text = _read(repo, path, scan.texts)
        if text is not None:
            scan.pins.extend(workflow_pins(path, text, scan.lanes))


def _add_found_lanes(repo: Path, scan: Scan) -> None:
    """The lanes found by meaning (image/lanes.py) beside the configured ones.

    A configured lane keeps its Dockerfile's FROM_IMAGE_NAME; a build argument the
    Dockerfile does not declare is no pin of it, only a finding; Megatron-LM's default lanes
    that find nothing are no finding once another lane is managed.
    """
    from uvdock.image.lanes import UNDECLARED, discover

    covered = {(rule.dockerfile, "FROM_IMAGE_NAME") for rule in scan.lanes if rule.dockerfile}
    found = discover(repo, covered, scan.texts)
    dead = {(f.path, f.line) for f in found.findings if f.kind == UNDECLARED}
    scan.pins[:] = [p for p in scan.pins if (p.path, p.line) not in dead]
    scan.lanes.extend(found.lanes)
    scan.pins.extend(found.pins)
    scan.findings.extend(found.findings)
    scan.unclassified.extend(found.unrecognised)
    for path, text in found.texts.items():
        scan.texts.setdefault(path, text)
    # Megatron-LM's layout (one of its pin files is here): its lanes' findings all stand.
    megatron = any(r.pin_file in scan.texts for r in scan.lanes if not r.arg and r.pin_file)
    if scan.pins and not megatron:
        # Megatron-LM's lane where none of its files is here (neither its default pin file
        # nor a Dockerfile of its own: absent, or another lane's) while another lane is
        # managed: no lane of this repository.
        defaults = {
            r.lane
            for r in scan.lanes
            if not r.arg
            and r.pin_file not in r.configured
            and (
                r.dockerfile not in scan.texts
                or any(p.path == r.dockerfile and p.lane != r.lane for p in scan.pins)
            )
        }
        scan.findings[:] = [
            f for f in scan.findings if not (f.kind == "no-managed-pin" and f.lane in defaults)
        ]


def scan_managed(
    repo: Path, config: Config, absent_tracked: Mapping[str, bool] | None = None
) -> Scan:
    """Read every lane's managed pins from the working tree.

    `absent_tracked`: the managed files git tracks that the work tree lacks, each with whether
    a sparse checkout left it out (the command asks git; see managed_paths), each a finding.
    """
    scan = Scan(lane_rules(config), [], [], {}, [])
    for rule in scan.lanes:
        _read_lane_files(repo, rule, scan)
    gitlab_file, explicit = configured_gitlab_file(config)
    gitlab = _read(repo, gitlab_file, scan.texts) if gitlab_file else None
    if gitlab is not None:
        rows = _gitlab_rows(gitlab_file, gitlab, scan)
        for rule in scan.lanes:
            # A lane with neither a pin file nor CI rows is not built by this CI file.
            if rows[rule.lane] or scan.pin_file(rule.lane) is not None:
                scan.findings.extend(
                    _platform_findings(gitlab_file, rule.lane, rows[rule.lane], config.platforms)
                )
    elif gitlab_file and explicit:
        scan.findings.append(_missing("dev", gitlab_file, "gitlab-build-file"))
    _read_workflows(repo, config, scan)
    pin_files = {rule.pin_file for rule in scan.lanes if rule.pin_file in scan.texts}
    for rule in scan.lanes:
        scan.findings.extend(_lane_findings(rule, scan, pin_files))
    _add_found_lanes(repo, scan)
    if absent_tracked:
        _not_checked_out(scan, absent_tracked)
    scan.pins.sort(key=lambda p: (p.path, p.line))
    return scan
