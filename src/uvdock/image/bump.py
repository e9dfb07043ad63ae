"""Plan a bump of one lane's managed base-image pins: exactly their values change."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from uvdock.errors import InputRefused
from uvdock.files.edit import FileEdit
from uvdock.image.pins import Finding, Pin, Scan, expected_tag
from uvdock.image.scan import NOT_CHECKED_OUT, UNSUPPORTED_SHAPE
from uvdock.registry.tags import PREFIX, tag_key


@dataclass(frozen=True)
class BumpPlan:
    lane: str
    tag: str
    current: str | None
    edits: list[FileEdit]
    changed: list[Pin]  # the pins whose value changes, as they are now
    warnings: list[Finding]

    @property
    def noop(self) -> bool:
        return not self.changed


def current_tag(scan: Scan, lane: str) -> str | None:
    """The pin file's tag, or the newest well-formed managed tag when the pin file has none."""
    expected = expected_tag(scan, lane)
    if expected is not None:
        return expected
    tags = [pin.tag for pin in scan.lane_pins(lane) if pin.well_formed]
    return max(tags, key=tag_key) if tags else None


def _verify_workflow(path: str, old: str, new: str, changed: list[Pin], value: str) -> None:
    """A workflow edit is read back with a YAML parser: exactly the references changed."""
    if any(pin.source == "workflow" for pin in changed):
        from uvdock.image.workflows import verify_edit

        verify_edit(path, old, new, {pin.value: value for pin in changed}, len(changed))


def _downgrade_hint(scan: Scan, lane: str, tag: str) -> str:
    """--allow-downgrade moves the lane back; a dev tag not older than LTS is an LTS bump first."""
    downgrade = "pass --allow-downgrade to move back on purpose"
    if lane != "dev" or not any(rule.lane == "lts" for rule in scan.lanes):
        return downgrade
    lts = current_tag(scan, "lts")
    if lts is None or tag_key(tag) < tag_key(lts):
        return downgrade
    if tag_key(tag) == tag_key(lts):  # `--lts` would change nothing: no LTS bump to suggest
        return (
            f"{tag} is already the LTS lane's tag; to move dev back to it on purpose, pass"
            " --allow-downgrade"
        )
    return (
        f"{tag} is not older than the LTS lane's {lts}: to move LTS, pass --lts"
        f" (`uvdock image bump {tag} --lts`); to move dev back on purpose, pass"
        " --allow-downgrade"
    )


def _refuse_unbumpable(scan: Scan, lane: str) -> None:
    """Findings a bump cannot go past: a pin file that is no single reference, a managed file
    the work tree lacks, a pin in a shape the span editor cannot edit exactly."""
    for finding in scan.findings:
        if finding.lane == lane and finding.kind == "pin-file-content":
            raise InputRefused(
                f"{finding.path}: {finding.message}",
                hint="fix the pin file by hand (resolve the conflict, drop extra lines or"
                " comments), then bump again",
            )
    for finding in scan.findings:
        if finding.kind == NOT_CHECKED_OUT and finding.lane in (lane, ""):
            raise InputRefused(
                f"{finding.path}: {finding.message}; nothing was changed",
                hint="bring the file back as said above, then bump again",
            )
        if finding.lane == lane and finding.kind == UNSUPPORTED_SHAPE:
            raise InputRefused(
                f"{finding.location}: {finding.message}; nothing was changed",
                hint="rewrite that pin in the plain shape by hand, then bump again",
            )


def plan_bump(
    repo: Path,
    scan: Scan,
    lane: str,
    tag: str,
    *,
    allow_downgrade: bool,
    gitlab_file: str = "",
) -> BumpPlan:
    """The edits that move every managed pin of `lane` to `tag`, or a refusal (InputRefused).

    `gitlab_file`, when given, is re-read as YAML after the edit (image/matrix_verify.py):
    every row of the lane at the new image and nothing else changed, or the bump is refused.
    """
    rule = next(r for r in scan.lanes if r.lane == lane)
    _refuse_unbumpable(scan, lane)
    pins = scan.lane_pins(lane)
    if not pins:
        raise InputRefused(
            f"no {lane} pins found (looked for {rule.pin_file}, {rule.dockerfile} and the matrix)",
            hint=f"set `{lane}-pin-file` under [tool.uvdock] if the pin file lives elsewhere",
        )
    current = current_tag(scan, lane)
    if current is not None and tag_key(tag) < tag_key(current) and not allow_downgrade:
        raise InputRefused(
            f"{tag} is older than the {lane} lane's current {current}",
            hint=_downgrade_hint(scan, lane, tag),
        )
    new_value = PREFIX + tag
    changed = [pin for pin in pins if pin.value != new_value]
    edits: list[FileEdit] = []
    for path in sorted({pin.path for pin in changed}):
        old = scan.texts[path]
        new = old
        for pin in sorted((p for p in changed if p.path == path), key=lambda p: -p.start):
            new = new[: pin.start] + new_value + new[pin.end :]
        _verify_workflow(path, old, new, [p for p in changed if p.path == path], new_value)
        edits.append(FileEdit(repo / path, old, new, display=path))
    if gitlab_file in scan.texts:
        from uvdock.image.matrix_verify import verify_matrix_bump

        after = next((e.new for e in edits if e.display == gitlab_file), scan.texts[gitlab_file])
        verify_matrix_bump(gitlab_file, scan.texts[gitlab_file], after, scan.lanes, lane, new_value)
    warnings = [f for f in scan.findings if f.lane == lane]
    return BumpPlan(lane, tag, current, edits, changed, warnings)
