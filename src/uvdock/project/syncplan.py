"""The `uv sync` arguments for a profile, checked against what the project really declares.

The reference docs say `--group dev`; on Megatron-LM `dev` is an extra, so the repository's
own pyproject.toml decides whether a name becomes `--extra` or `--group`. Packages the base
image provides are never reinstalled (`--no-install-package`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.project.pyproject import ProjectDeps

PROFILES: dict[str, tuple[str, ...]] = {
    "dev": ("dev", "test"),
    "lint": (),
    "lts": ("test",),
}


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
) -> SyncPlan:
    if profile not in PROFILES:
        raise InputRefused(f"unknown profile `{profile}`; profiles: {', '.join(PROFILES)}")
    notes: list[str] = []
    if profile == "lint":
        if groups or extras:
            raise InputRefused(
                "--profile lint installs only the linting group; drop --group/--extra"
            )
        return SyncPlan(["sync", "--locked", "--only-group", "linting"], notes)

    wanted: list[tuple[str, str]] = [(name, "") for name in PROFILES[profile]]
    wanted += [(name, "group") for name in groups] + [(name, "extra") for name in extras]
    if profile == "lts" and "lts" in {e.lower() for e in deps.extras}:
        wanted.insert(0, ("lts", "extra"))
    args = ["sync", "--locked"]
    seen: set[tuple[str, str]] = set()
    for name, asked in wanted:
        kind = deps.classify(name)
        if asked and asked != kind:
            notes.append(
                f"`{name}` is an {kind} in pyproject.toml: using --{kind} {name}, not --{asked}"
            )
        flag = f"--{kind}"
        if (flag, name) not in seen:
            seen.add((flag, name))
            args += [flag, name]
    for package in protected:
        args += ["--no-install-package", package]
    return SyncPlan(args, notes)
