"""Base-image pins in GitHub workflows: a step that builds a lane's Dockerfile with a
hard-coded `FROM_IMAGE_NAME` (Megatron-LM's workflows, 2025-09 to 2026-01), in a `run:`
script (`docker build -f ... --build-arg FROM_IMAGE_NAME=...`) or a build action's `with:`
mapping (`file:` beside a `build-args: |` line). Each is a managed pin of the lane whose
Dockerfile the step names (an `IMAGE_TYPE` build argument tells two lanes of one file apart).
The builds are read by image/ci_builds.py; verify_edit re-reads an edited file as YAML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from uvdock.errors import InputRefused
from uvdock.files.textlines import regular_file
from uvdock.formats.yaml import edit_changes
from uvdock.image.ci_builds import ci_builds
from uvdock.image.pins import LaneRules, Pin, managed_pin
from uvdock.registry.tags import PREFIX

if TYPE_CHECKING:
    from pathlib import Path


def workflow_files(repo: Path, globs: Sequence[str]) -> list[str]:
    """The repository's files matching the configured globs, as relative POSIX paths.
    A glob that leaves the repository is refused (exit 2), like any configured path."""
    top = repo.resolve()
    found: set[str] = set()
    for pattern in globs:
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise InputRefused(
                f"configuration `workflow-files`: {pattern!r} must be a glob inside the repository",
                hint="use a path relative to the repository root, e.g. .github/workflows/*.yml",
            )
        for path in repo.glob(pattern):
            if not regular_file(path):  # also a symlink loop, which resolve() would raise on
                continue
            real = path.resolve()
            if real == top or top in real.parents:
                found.add(path.relative_to(repo).as_posix())
    return sorted(found)


def _lane_of(dockerfile: str, image_type: str, lanes: Sequence[LaneRules]) -> str | None:
    """The configured lane building `dockerfile`; IMAGE_TYPE tells two lanes of one file apart."""
    of_file = [r.lane for r in lanes if not r.arg and r.dockerfile == dockerfile]
    return image_type if image_type in of_file[1:] else next(iter(of_file), None)


def workflow_pins(path: str, text: str, lanes: Sequence[LaneRules]) -> list[Pin]:
    """The managed pins one workflow file holds (none when it is not YAML)."""
    if "FROM_IMAGE_NAME" not in text or PREFIX not in text:
        return []  # most workflows: no YAML parse at all
    pins: list[Pin] = []
    for build in ci_builds(path, text):
        image_type = next((a.value for a in build.args if a.name == "IMAGE_TYPE"), "")
        lane = _lane_of(build.dockerfile, image_type, lanes)
        if lane is None:
            continue
        pins += [
            managed_pin(path, text, lane, "workflow", arg.start, arg.end)
            for arg in build.args
            if arg.name == "FROM_IMAGE_NAME" and not arg.path and arg.value.startswith(PREFIX)
        ]
    return list({(pin.start, pin.end): pin for pin in pins}.values())


def _undo_all(value: str, replaced: Mapping[str, str]) -> str:
    """Every old and new reference as one placeholder: what must stay the same."""
    for ref in sorted({*replaced, *replaced.values()}, key=len, reverse=True):
        value = value.replace(ref, "\0REF\0")
    return value


def verify_edit(path: str, old: str, new: str, replaced: Mapping[str, str], count: int) -> None:
    """Refuse (exit 2, nothing written) an edit of a workflow after which YAML reads
    anything else than the same values with `count` references swapped as `replaced` says."""
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
