"""`image show --explain`: what uvdock found and uses, as a ready `[tool.uvdock]` table: each
key the value in force with where it came from, so pasting it changes nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from uvdock.image.pins import LANE_KEYS, Finding, Pin, Scan, reference_tag

if TYPE_CHECKING:
    from uvdock.config.settings import Config

_IMAGE_KEYS = ("dockerfile", "build_target", "image", "lts_image")


def _key_line(config: Config, name: str, origins: Mapping[str, str], note: str = "") -> str:
    origin = origins.get(name, "uvdock's default")
    if name in origins and not origin.startswith("derived: "):
        origin = f"set in {origin}"
    value = getattr(config, name)
    value = json.dumps(list(value) if isinstance(value, tuple) else value)
    return f"{name.replace('_', '-')} = {value}  # {note or origin.removeprefix('derived: ')}"


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
        lane, pins = rule.lane, scan.lane_pins(rule.lane)
        if rule.arg:
            reference, source = reference_tag(scan, lane)
            lines.append(f"# lane {lane}: {reference} (from {source})")
            lines += [f"#   {pin.location} ({pin.source})" for pin in pins]
            lines.append(f"#   bump: uvdock image bump TAG --lane {lane}")
        elif pins:
            lines.append(f"# lane {lane}: {len(pins)} managed pins")
            # The dev lane's Dockerfile is the CI image's, said above.
            keys = [key for key in LANE_KEYS[lane] if key not in _IMAGE_KEYS]
            lines += [_key_line(config, name, origins) for name in keys]
        else:  # `<lane>-pin-file = ""` says the lane does not exist
            key = LANE_KEYS[lane][0]
            note = "" if key in origins else f"no {lane} lane here (no pin file, no pin)"
            lines.append(_key_line(config.replace(**{key: ""}), key, origins, note))
    if any(scan.lane_pins(lane) for lane in LANE_KEYS):
        lines += [_key_line(config, k, origins) for k in ("gitlab_build_file", "workflow_files")]
    lines += [f"# not managed: {pin.location} `{pin.value}`: {pin.note}" for pin in unmanaged]
    lines += [f"# finding: {finding.location}: {finding.message}" for finding in findings]
    return "\n".join(lines) + "\n"
