"""`image show --explain`: what uvdock found and uses, as a ready `[tool.uvdock]` table.
Every key is the value in force with where it came from as a comment, so pasting the table
changes nothing; found lanes and unmanaged bases are listed as comments."""

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


def _key_line(config: Config, name: str, origins: Mapping[str, str], note: str = "") -> str:
    origin = origins.get(name, "uvdock's default")
    if origin.startswith("derived: "):
        origin = origin[len("derived: ") :]
    elif name in origins:
        origin = f"set in {origin}"
    value = getattr(config, name)
    value = json.dumps(list(value) if isinstance(value, tuple) else value)
    return f"{name.replace('_', '-')} = {value}  # {note or origin}"


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
    lines = [
        "# uvdock image show --explain: append to pyproject.toml (in uvdock.toml, without the header)",
        "[tool.uvdock]",
    ]
    lines += ["", "# The CI image uv runs in (image build, run, sync, doctor)."]
    lines += [_key_line(config, name, origins) for name in _IMAGE_KEYS]
    lines += ["", "# Base-image lanes: each lane's references move together (image check, bump)."]
    for rule in scan.lanes:
        if not rule.arg:
            lines += _megatron_lane(scan, config, rule.lane, origins)
            continue
        reference, source = reference_tag(scan, rule.lane)
        lines.append(f"# lane {rule.lane}: {reference} (from {source})")
        lines += [f"#   {pin.location} ({pin.source})" for pin in scan.lane_pins(rule.lane)]
        lines.append(f"#   bump: uvdock image bump TAG --lane {rule.lane}")
    if any(scan.lane_pins(lane) for lane in _LANE_KEYS):
        lines += [
            _key_line(config, key, origins) for key in ("gitlab_build_file", "workflow_files")
        ]
    lines += [f"# not managed: {pin.location} `{pin.value}`: {pin.note}" for pin in unmanaged]
    lines += [f"# finding: {finding.location}: {finding.message}" for finding in findings]
    return "\n".join(lines) + "\n"
