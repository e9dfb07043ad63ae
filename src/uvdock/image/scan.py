"""Read each lane's managed base-image pins from the working tree, each with the span of its
value (a bump replaces that alone), and the structural findings; pins.check compares them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import InputRefused
from uvdock.files.textlines import regular_file
from uvdock.image.ci_builds import ci_builds
from uvdock.image.dockerfile import arg_defaults
from uvdock.image.lanes import UNDECLARED, discover, read_file
from uvdock.image.pins import (
    BASE_IMAGE_KEY,
    LANE_KEYS,
    NOT_CHECKED_OUT,
    PLATFORM_KEY,
    UNSUPPORTED_SHAPE,
    Finding,
    LaneRules,
    Pin,
    Scan,
    configured_gitlab_file,
    lane_rules,
    managed_pin,
    pin_file_pin,
)
from uvdock.registry.tags import PREFIX

if TYPE_CHECKING:
    from uvdock.config.settings import Config


def _gitlab(path: str, text: str, scan: Scan, platforms: Sequence[str]) -> None:
    """The matrix rows each lane selects: their pins, and one row per configured platform."""
    from uvdock.image.gitlab import sequence_items

    rows: dict[str, list[tuple[int, Pin]]] = {rule.lane: [] for rule in scan.lanes}
    for item in sequence_items(text):
        fields = {key: scalar.value for key, scalar in item.fields.items()}
        lanes = [rule.lane for rule in scan.lanes if rule.selects(fields)]
        base = item.fields.get(BASE_IMAGE_KEY)
        if len(lanes) == 1 and base is not None:
            lane, platform = lanes[0], fields.get(PLATFORM_KEY, "")
            pin = managed_pin(path, text, lane, "gitlab", base.start, base.end, platform=platform)
            rows[lane].append((item.line, pin))
            scan.pins.append(pin)
        elif len(lanes) > 1:
            message = f"matrix row matches the rules of several lanes ({', '.join(lanes)})"
            scan.findings.append(Finding("ambiguous-row", lanes[0], path, item.line, message))
        elif lanes:
            message = f"{lanes[0]} matrix row has no {BASE_IMAGE_KEY}"
            scan.findings.append(Finding("no-base-image", lanes[0], path, item.line, message))
        elif base is not None and base.value.startswith(PREFIX):
            pin = managed_pin(path, text, "", "gitlab", base.start, base.end)
            scan.unclassified.append(pin._replace(lane=None, managed=False))
    for lane, found in rows.items():
        if not found and scan.pin_file(lane) is None:
            continue  # a lane with neither a pin file nor CI rows is not built by this file
        single = not any(pin.platform for _, pin in found)
        first = found[0][0] if found else None
        scan.findings.extend(
            Finding("no-platform", lane, path, line, f"{lane} matrix row has no {PLATFORM_KEY}")
            for line, pin in found
            if not pin.platform and not single
        )
        for platform in [""] if found and single else platforms:
            matching = [line for line, pin in found if pin.platform == platform]
            if not matching:
                message = f"no {lane} matrix row for platform {platform}"
                scan.findings.append(Finding("platform-missing", lane, path, first, message))
            what = f"for platform {platform}" if platform else f"without {PLATFORM_KEY}"
            for extra in matching[1:]:
                message = f"second {lane} matrix row {what} (first at line {matching[0]})"
                scan.findings.append(Finding("platform-doubled", lane, path, extra, message))


def _missing(lane: str, path: str, setting: str) -> Finding:
    message = f"{path} does not exist (set as `{setting}`); check the path"
    return Finding("file-missing", lane, path, None, message)


def _read_lane_files(repo: Path, rule: LaneRules, scan: Scan) -> None:
    """The lane's pin file and `ARG FROM_IMAGE_NAME=` defaults; a file named must exist."""
    lane = rule.lane
    for path, key in zip((rule.pin_file, rule.dockerfile), LANE_KEYS[lane][:2], strict=True):
        text = read_file(repo, path, scan.texts) if path else None
        if text is None:
            if path and path in rule.configured:
                scan.findings.append(_missing(lane, path, key.replace("_", "-")))
        elif path == rule.dockerfile:
            defaults, problems = arg_defaults(text, "FROM_IMAGE_NAME")
            scan.pins.extend(
                managed_pin(path, text, lane, "dockerfile", d.start, d.end) for d in defaults
            )
            scan.findings.extend(Finding(UNSUPPORTED_SHAPE, lane, path, *p) for p in problems)
        elif isinstance(found := pin_file_pin(path, text, lane), Pin):
            scan.pins.append(found)
        else:
            scan.findings.append(found)


def _lane_findings(rule: LaneRules, scan: Scan, pin_files: set[str]) -> list[Finding]:
    """A lane needs a managed pin, and its own pin file when another lane has one."""
    lane, pin_file = rule.lane, rule.pin_file
    missing = any(f.lane == lane and f.kind == "file-missing" for f in scan.findings)
    if not pin_file or pin_file in pin_files or missing:
        return []
    if scan.lane_pins(lane):
        message = f"{lane} pins exist and so do other lanes' pin files, but {pin_file} does not"
        return [Finding("pin-file-missing", lane, pin_file, None, message)] if pin_files else []
    message = (
        f"the {lane} lane has no managed pin: no {pin_file}"
        + (f", no default in {rule.dockerfile}" if rule.dockerfile else "")
        + f', no matrix row (`{lane}-matrix-match`); set `{lane}-pin-file = ""`'
        " if this repository has no such lane"
    )
    return [Finding("no-managed-pin", lane, pin_file, None, message)]


def workflow_files(repo: Path, globs: Sequence[str]) -> list[str]:
    """The files the configured globs match; a glob leaving the repository is refused."""
    top = repo.resolve()
    found: set[str] = set()
    for pattern in globs:
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise InputRefused(
                f"configuration `workflow-files`: {pattern!r} must be a glob inside the repository",
                hint="use a path relative to the repository root, e.g. .github/workflows/*.yml",
            )
        # regular_file first: it also refuses a symlink loop, which resolve() would raise on.
        found.update(
            path.relative_to(repo).as_posix()
            for path in repo.glob(pattern)
            if regular_file(path) and top in path.resolve().parents
        )
    return sorted(found)


def workflow_pins(path: str, text: str, lanes: Sequence[LaneRules]) -> list[Pin]:
    """Each hard-coded `FROM_IMAGE_NAME` of a lane's Dockerfile build (Megatron-LM 2025-09+)."""
    if "FROM_IMAGE_NAME" not in text or PREFIX not in text:
        return []  # most workflows: no YAML parse at all
    pins: list[Pin] = []
    for build in ci_builds(path, text):
        # The configured lane building the Dockerfile; IMAGE_TYPE tells two lanes of it apart.
        of_file = [r.lane for r in lanes if not r.arg and r.dockerfile == build.dockerfile]
        image_type = next((a.value for a in build.args if a.name == "IMAGE_TYPE"), "")
        lane = image_type if image_type in of_file[1:] else next(iter(of_file), None)
        if lane is None:
            continue
        pins += [
            managed_pin(path, text, lane, "workflow", arg.start, arg.end)
            for arg in build.args
            if arg.name == "FROM_IMAGE_NAME" and not arg.path and arg.value.startswith(PREFIX)
        ]
    return list({(pin.start, pin.end): pin for pin in pins}.values())


def managed_paths(config: Config) -> list[str]:
    paths = {p for rule in lane_rules(config) for p in (rule.pin_file, rule.dockerfile)}
    return sorted(p for p in paths | {configured_gitlab_file(config)[0]} if p)


def _not_checked_out(scan: Scan, absent_tracked: Mapping[str, bool]) -> None:
    """Name each tracked managed file the work tree lacks, and the way back."""
    scan.findings[:] = [f for f in scan.findings if f.path not in absent_tracked]
    for path, sparse in sorted(absent_tracked.items()):
        lanes = [r.lane for r in scan.lanes if path in (r.pin_file, r.dockerfile)] or [""]
        if sparse:
            why = "left out by the sparse checkout"
            how = f"bring it back with `git sparse-checkout add {path.rpartition('/')[0] or path}`"
        else:
            why = "deleted, the deletion not committed"
            how = f"restore it with `git restore -- {path}`, or commit its removal"
        message = (
            f"tracked by git but absent from the work tree ({why}): its pins can be neither"
            f" checked nor bumped; {how}"
        )
        scan.findings.extend(Finding(NOT_CHECKED_OUT, lane, path, None, message) for lane in lanes)


def _add_found_lanes(repo: Path, scan: Scan) -> None:
    """The lanes found by meaning (image/lanes.py) beside the configured ones."""
    covered = {(rule.dockerfile, "FROM_IMAGE_NAME") for rule in scan.lanes if rule.dockerfile}
    discover(repo, covered, scan)
    # A configured pin passed to a Dockerfile that declares no such ARG is no pin.
    dead = {(f.path, f.line) for f in scan.findings if f.kind == UNDECLARED}
    found = {rule.lane for rule in scan.lanes if rule.arg}
    scan.pins[:] = [p for p in scan.pins if p.lane in found or (p.path, p.line) not in dead]
    # Megatron-LM's layout (one of its pin files is here): its lanes' findings all stand.
    megatron = any(r.pin_file in scan.texts for r in scan.lanes if not r.arg)
    if scan.pins and not megatron:
        # Megatron-LM's lane none of whose files is here (default pin file, a Dockerfile of
        # its own) while another lane is managed: no lane of this repository.
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
    """Every lane's managed pins; `absent_tracked`: managed files git tracks that the work
    tree lacks, each with whether a sparse checkout left it out (see managed_paths)."""
    scan = Scan(lane_rules(config), [], [], {}, [], [])
    for rule in scan.lanes:
        _read_lane_files(repo, rule, scan)
    gitlab_file, explicit = configured_gitlab_file(config)
    gitlab = read_file(repo, gitlab_file, scan.texts) if gitlab_file else None
    if gitlab is not None:
        _gitlab(gitlab_file, gitlab, scan, config.platforms)
    elif gitlab_file and explicit:
        scan.findings.append(_missing("dev", gitlab_file, "gitlab-build-file"))
    for path in workflow_files(repo, config.workflow_files):
        if (text := read_file(repo, path, scan.texts)) is not None:
            scan.pins.extend(workflow_pins(path, text, scan.lanes))
    pin_files = {rule.pin_file for rule in scan.lanes if rule.pin_file in scan.texts}
    for rule in scan.lanes:
        scan.findings.extend(_lane_findings(rule, scan, pin_files))
    _add_found_lanes(repo, scan)
    if absent_tracked:
        _not_checked_out(scan, absent_tracked)
    scan.pins.sort(key=lambda p: (p.path, p.line))
    return scan
