"""`image show --explain`: what uvdock found and uses, as a ready `[tool.uvdock]` table.

Every key is the value in force (found, derived, a default, or set), with where it came from
as a comment, so pasting the table changes nothing and editing one line changes exactly that
setting. Lanes found by meaning need no key: each is listed as comments with its references,
and so is every base no lane manages, with why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from uvdock.image.pins import Finding, Pin, Scan, reference_tag

if TYPE_CHECKING:
    from uvdock.config.settings import Config

_IMAGE_KEYS = ("dockerfile", "build_target", "image", "lts_image")
_LANE_KEYS = {
    "dev": ("dev_pin_file", "dev_matrix_match"),
    "lts": ("lts_pin_file", "lts_dockerfile", "lts_matrix_match"),
}


def _value(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(json.dumps(item) for item in value) + "]"
    return json.dumps(value)


def _key_line(config: Config, name: str, origins: Mapping[str, str], note: str = "") -> str:
    origin = origins.get(name, "uvdock's default")
    if origin.startswith("derived: "):
        origin = origin[len("derived: ") :]
    elif name in origins:
        origin = f"set in {origin}"
    return f"{name.replace('_', '-')} = {_value(getattr(config, name))}  # {note or origin}"


def _found_lane(scan: Scan, lane: str) -> list[str]:
    reference, source = reference_tag(scan, lane)
    lines = [f"# lane {lane}: {reference} (from {source})"]
    lines += [f"#   {pin.location} ({pin.source})" for pin in scan.lane_pins(lane)]
    lines.append(f"#   bump: uvdock image bump TAG --lane {lane}")
    return lines


def _megatron_lane(scan: Scan, config: Config, lane: str, origins: Mapping[str, str]) -> list[str]:
    names = _LANE_KEYS[lane]
    if not scan.lane_pins(lane):
        note = "" if names[0] in origins else f"no {lane} lane here (no pin file, no pin)"
        return [_key_line(config.replace(**{names[0]: ""}), names[0], origins, note)]
    lines = [f"# lane {lane}: {len(scan.lane_pins(lane))} managed pins"]
    return lines + [_key_line(config, name, origins) for name in names]


def render(
    scan: Scan,
    config: Config,
    origins: Mapping[str, str],
    findings: Sequence[Finding],
    unmanaged: Sequence[Pin],
) -> str:
    """The table, with the lanes, findings and unmanaged bases as comments."""
    lines = [
        "# uvdock image show --explain: append to pyproject.toml (in uvdock.toml, without the header)",
        "[tool.uvdock]",
    ]
    lines += ["", "# The CI image uv runs in (image build, run, sync, doctor)."]
    lines += [_key_line(config, name, origins) for name in _IMAGE_KEYS]
    lines += ["", "# Base-image lanes: each lane's references move together (image check, bump)."]
    for rule in scan.lanes:
        if rule.arg:
            lines += _found_lane(scan, rule.lane)
        else:
            lines += _megatron_lane(scan, config, rule.lane, origins)
    if any(scan.lane_pins(lane) for lane in _LANE_KEYS):
        lines.append(_key_line(config, "gitlab_build_file", origins))
        lines.append(_key_line(config, "workflow_files", origins))
    for pin in unmanaged:
        lines.append(f"# not managed: {pin.location} `{pin.value}`: {pin.note}")
    for finding in findings:
        lines.append(f"# finding: {finding.location}: {finding.message}")
    return "\n".join(lines) + "\n"
