"""What `uvdock sync` installs: the lane Dockerfile's selection plus the profile's, checked
against what the project really declares (on Megatron-LM `dev` is an extra), `--inexact`
unless asked (keeps what `uv pip` added), never reinstalling what the base image provides."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from uvdock.errors import InputRefused
from uvdock.files import textlines
from uvdock.project import pyproject
from uvdock.project.dockerfile_sync import read_selection
from uvdock.project.names import normalize_name

if TYPE_CHECKING:
    from uvdock.config.settings import Config
    from uvdock.project.dockerfile_sync import SyncSelection
    from uvdock.project.pyproject import ProjectDeps

PROFILES: dict[str, tuple[str, ...]] = {"dev": ("dev", "test"), "lint": (), "lts": ("test",)}
_REMOVAL = re.compile(r"^\s*- ([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?==\S+)", re.M)


class SyncPlan(NamedTuple):
    uv_args: list[str]
    notes: list[str]


def environment_plan(
    repo: Path,
    project: Path,
    config: Config,
    warn: Callable[[str], None],
    profile: str = "dev",
    *,
    groups: Sequence[str] = (),
    extras: Sequence[str] = (),
    exact: bool = False,
    created: bool = False,
) -> SyncPlan:
    """`created`: the step before (`uv add`, not run in a dry run) creates `groups` and
    `extras`, so they count as declared."""
    deps = pyproject.read(project)
    if created:
        declared = {normalize_name(n) for n in (*deps.extras, *deps.groups)}
        deps = deps._replace(
            extras=(*deps.extras, *(e for e in extras if normalize_name(e) not in declared)),
            groups=(*deps.groups, *(g for g in groups if normalize_name(g) not in declared)),
        )
    dockerfile = repo / _lane_dockerfile(repo, config, profile)
    protected = pyproject.protected_packages(dockerfile, config.protected_packages)
    image = None
    if profile != "lint":  # what the lane's Dockerfile syncs into the image, on this machine
        import platform

        machine = platform.machine().lower()
        try:
            image = read_selection(
                textlines.read_text(dockerfile, newlines=True),
                image_type="lts" if profile == "lts" else "dev",
                platform={"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine),
            )
        except OSError:
            shown = dockerfile.relative_to(repo)
            warn(f"{shown} not readable: the image's own selection is not known")
        if image is not None and not image.found:
            shown = dockerfile.relative_to(repo)
            warn(f"no `uv sync` line in {shown}: the profile's own selection only")
            image = None
    return build(
        profile, deps, groups=groups, extras=extras, protected=protected, image=image, exact=exact
    )


def _lane_dockerfile(repo: Path, config: Config, profile: str) -> str:
    if profile != "lts":
        return config.dockerfile
    # Megatron-LM early 2026 had no LTS Dockerfile: its LTS rows built the dev one with
    # IMAGE_TYPE=lts, so that file (when it reads IMAGE_TYPE) holds the LTS selection.
    if not textlines.regular_file(repo / config.lts_dockerfile):
        try:
            if "IMAGE_TYPE" in textlines.read_text(repo / config.dockerfile, newlines=True):
                return config.dockerfile
        except OSError:
            pass
    return config.lts_dockerfile


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
        return SyncPlan(["sync", "--locked", mode, "--only-group", "linting"], [])
    notes = list(image.notes) if image else []
    wanted: list[tuple[str, str]] = []
    own = {kind: set(map(normalize_name, names)) for kind, names in deps._asdict().items()}
    # The Dockerfile's own extras and groups the project declares.
    for kind, names in (("extra", image.extras), ("group", image.groups)) if image else ():
        for name in names:
            if normalize_name(name) in own[f"{kind}s"]:
                wanted.append((name, kind))
            else:
                notes.append(
                    f"the Dockerfile syncs --{kind} {name}, which pyproject.toml does not "
                    "declare: left out"
                )
    for name in PROFILES[profile]:
        if normalize_name(name) in own["extras"] | own["groups"]:
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


def removals(uv_output: str) -> list[str]:
    """The `- name==version` lines of `uv sync --dry-run` output: what uv would uninstall."""
    return _REMOVAL.findall(uv_output)
