"""The `uv sync` arguments for a profile, checked against what the project really declares
(on Megatron-LM `dev` is an extra). The base image's packages are never reinstalled; dev and
lts start from what the lane's Dockerfile syncs, `--inexact` (keeps what `uv pip` added)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.project.dockerfile_sync import SyncSelection
from uvdock.project.names import normalize_name
from uvdock.project.pyproject import ProjectDeps

PROFILES: dict[str, tuple[str, ...]] = {"dev": ("dev", "test"), "lint": (), "lts": ("test",)}


class SyncPlan(NamedTuple):
    uv_args: list[str]
    notes: list[str]


def build(
    profile: str,
    deps: ProjectDeps,
    *,
    groups: Sequence[str] = (),
    extras: Sequence[str] = (),
    protected: Sequence[str] = (),
    image: SyncSelection | None = None,
    exact: bool = False,
) -> SyncPlan:
    """A profile's name the project lacks is left out with a note; one asked for must exist."""
    if profile not in PROFILES:
        raise InputRefused(f"unknown profile `{profile}`; profiles: {', '.join(PROFILES)}")
    notes: list[str] = []
    mode = "--exact" if exact else "--inexact"
    if profile == "lint":
        if groups or extras:
            raise InputRefused(
                "--profile lint installs only the linting group; drop --group/--extra"
            )
        if "linting" not in map(normalize_name, deps.groups):
            raise InputRefused(
                "--profile lint installs the `linting` dependency group, which pyproject.toml "
                "does not declare; nothing was synced",
                hint="sync this project's own group instead: `uvdock sync --group NAME`",
            )
        return SyncPlan(["sync", "--locked", mode, "--only-group", "linting"], notes)
    wanted: list[tuple[str, str]] = []
    if image is not None:  # the Dockerfile's own extras and groups the project declares
        notes.extend(image.notes)
        kinds = (("extra", image.extras, deps.extras), ("group", image.groups, deps.groups))
        for kind, names, own in kinds:
            for name in names:
                if normalize_name(name) in map(normalize_name, own):
                    wanted.append((name, kind))
                else:
                    notes.append(
                        f"the Dockerfile syncs --{kind} {name}, which pyproject.toml does not declare: left out"
                    )
    declared = {normalize_name(n) for n in (*deps.extras, *deps.groups)}
    for name in PROFILES[profile]:
        if normalize_name(name) in declared:
            wanted.append((name, ""))
        else:
            notes.append(f"this project declares no `{name}` extra or group: left out of the sync")
    wanted += [(name, "group") for name in groups] + [(name, "extra") for name in extras]
    if profile == "lts" and "lts" in {e.lower() for e in deps.extras}:
        wanted.insert(0, ("lts", "extra"))
    chosen: dict[tuple[str, str], None] = {}
    for name, asked in wanted:
        kind = deps.classify(name)
        if asked and asked != kind:
            notes.append(
                f"`{name}` is an {kind} in pyproject.toml: using --{kind} {name}, not --{asked}"
            )
        chosen[(f"--{kind}", name)] = None
    args = ["sync", "--locked", mode, *(word for pair in chosen for word in pair)]
    return SyncPlan(args + [w for p in protected for w in ("--no-install-package", p)], notes)


_REMOVAL = re.compile(r"^\s*- ([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?==\S+)", re.M)


def removals(uv_output: str) -> list[str]:
    """The `- name==version` lines of `uv sync --dry-run` output: what uv would uninstall."""
    return _REMOVAL.findall(uv_output)
