"""Plan a bump of one lane's managed base-image pins: exactly their values change."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.files.edit import FileEdit
from uvdock.formats.yaml import edit_changes
from uvdock.image.dockerfile import global_args, read, stages
from uvdock.image.matrix_verify import verify_matrix_bump
from uvdock.image.pins import (
    NOT_CHECKED_OUT,
    UNSUPPORTED_SHAPE,
    Finding,
    LaneRules,
    Pin,
    Scan,
    expected_tag,
    reference_tag,
)
from uvdock.registry.tags import PREFIX, ImageTag, parse_image, tag_key

# The findings a bump cannot go past: (message, hint) by kind, the pin file's first.
_REFUSALS = {
    "pin-file-content": (
        "{0.path}: {0.message}",
        "fix the pin file by hand (resolve the conflict, drop extra lines or comments), then"
        " bump again",
    ),
    NOT_CHECKED_OUT: (
        "{0.path}: {0.message}; nothing was changed",
        "bring the file back as said above, then bump again",
    ),
    UNSUPPORTED_SHAPE: (
        "{0.location}: {0.message}; nothing was changed",
        "rewrite that pin in the plain shape by hand, then bump again",
    ),
}


class BumpPlan(NamedTuple):
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
    tags = [pin.tag for pin in scan.lane_pins(lane) if pin.well_formed]
    return expected_tag(scan, lane) or max(tags, key=tag_key, default=None)


def _downgrade_hint(scan: Scan, lane: str, tag: str) -> str:
    """--allow-downgrade moves the lane back; a dev tag not older than LTS is an LTS bump first."""
    lts = current_tag(scan, "lts") if lane == "dev" else None
    if lts is None or tag_key(tag) < tag_key(lts) or all(r.lane != "lts" for r in scan.lanes):
        return "pass --allow-downgrade to move back on purpose"
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


def _undo_all(value: str, replaced: Mapping[str, str]) -> str:
    """Every old and new reference as one placeholder: what must stay the same."""
    for ref in sorted({*replaced, *replaced.values()}, key=len, reverse=True):
        value = value.replace(ref, "\0REF\0")
    return value


def verify_edit(path: str, old: str, new: str, replaced: Mapping[str, str], count: int) -> None:
    """Refuse a workflow edit unless YAML reads only `count` references swapped."""
    edit = edit_changes(path, old, new)
    swaps = 0
    counted: set[int] = set()  # an anchored value read through several aliases counts once
    for where, was in edit.changed.items():
        now = edit.after[where]
        if now.tag != was.tag or _undo_all(now.value, replaced) != _undo_all(was.value, replaced):
            swaps = -1  # anything else changed
            break
        if id(was) not in counted:
            counted.add(id(was))
            swaps += sum(now.value.count(n) - was.value.count(n) for n in set(replaced.values()))
    if swaps != count:
        raise InputRefused(
            f"{path}: the bump would change more (or less) than the base-image references "
            "as YAML reads them; nothing was written",
            hint=f"bump {path} by hand",
        )


def _bumpable(scan: Scan, lane: str) -> LaneRules:
    """The lane's rules, unless a finding stops its bump."""
    for finding in sorted(scan.findings, key=lambda f: f.kind != "pin-file-content"):
        lanes = (lane, "") if finding.kind == NOT_CHECKED_OUT else (lane,)
        if finding.kind in _REFUSALS and finding.lane in lanes:
            message, hint = _REFUSALS[finding.kind]
            raise InputRefused(message.format(finding), hint=hint)
    return next(r for r in scan.lanes if r.lane == lane)


def _plan(
    repo: Path, scan: Scan, lane: str, value: str
) -> tuple[list[Pin], list[FileEdit], list[Finding]]:
    """The pins that change to `value`, each file with their spans replaced, the warnings."""
    changed = [pin for pin in scan.lane_pins(lane) if pin.value != value]
    edits: list[FileEdit] = []
    for path in sorted({pin.path for pin in changed}):
        old = new = scan.texts[path]
        in_file = [pin for pin in changed if pin.path == path]
        for pin in sorted(in_file, key=lambda p: -p.start):
            new = new[: pin.start] + value + new[pin.end :]
        if any(pin.source == "workflow" for pin in in_file):
            verify_edit(path, old, new, {pin.value: value for pin in in_file}, len(in_file))
        edits.append(FileEdit(repo / path, old, new, display=path))
    return changed, edits, [f for f in scan.findings if f.lane == lane]


def plan_bump(
    repo: Path,
    scan: Scan,
    lane: str,
    tag: str,
    *,
    allow_downgrade: bool,
    gitlab_file: str = "",
) -> BumpPlan:
    """The edits moving every managed pin of `lane` to `tag`, the GitLab file verified."""
    rule = _bumpable(scan, lane)
    if not scan.lane_pins(lane):
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
    changed, edits, warnings = _plan(repo, scan, lane, PREFIX + tag)
    if gitlab_file in scan.texts:
        after = next((e.new for e in edits if e.display == gitlab_file), scan.texts[gitlab_file])
        verify_matrix_bump(
            gitlab_file, scan.texts[gitlab_file], after, scan.lanes, lane, PREFIX + tag
        )
    return BumpPlan(lane, tag, current, edits, changed, warnings)


def found_target(
    scan: Scan, rule: LaneRules, text: str
) -> tuple[ImageTag, ImageTag | None, str | None]:
    """The image TEXT names (a tag, or a reference of the family), the current one as parsed
    and as written."""
    current, _ = reference_tag(scan, rule.lane)
    now = parse_image(current)[0] if current else None
    wanted = text.strip()
    if now is not None and ":" not in wanted and "/" not in wanted:
        wanted = f"{now.repository}:{wanted}"
    image, why = parse_image(wanted)
    if image is None:
        raise InputRefused(f"`{text}` cannot be the base of {rule.lane}: {why}")
    if now is not None and not image.same_family(now):
        raise InputRefused(
            f"`{wanted}` is not of {rule.lane}'s image family ({now.repository}, {now.family})",
            hint=f"name a tag like {now.tag}, or the whole reference to change family on purpose"
            " by editing the ARG by hand",
        )
    return image, now, current


def plan_found_bump(
    repo: Path, scan: Scan, lane: str, text: str, *, allow_downgrade: bool
) -> BumpPlan:
    """A found lane's references moved to the image TEXT names, re-read after the edit."""
    rule = _bumpable(scan, lane)
    new, now, current = found_target(scan, rule, text)
    if now is not None and new.key < now.key and not allow_downgrade:
        raise InputRefused(
            f"{new.tag} is older than the {lane} lane's current {now.tag}",
            hint="pass --allow-downgrade to move back on purpose",
        )
    reference = new.reference
    changed, edits, warnings = _plan(repo, scan, lane, reference)
    # The edited Dockerfile, read again: its base is now `reference`, or nothing is written.
    for parsed in (read(edit.new) for edit in edits if edit.display == rule.dockerfile):
        bases: set[str | None] = {stage.image for stage in stages(parsed)}
        if rule.arg != "FROM":
            bases = {global_args(parsed).get(rule.arg, (None, 0))[0]}
        if reference not in bases:
            raise InputRefused(
                f"{rule.dockerfile}: after the edit Docker would not read {reference} as the"
                " base; nothing was written",
                hint=f"bump {rule.dockerfile} by hand",
            )
    return BumpPlan(lane, new.tag, now.tag if now else current, edits, changed, warnings)
