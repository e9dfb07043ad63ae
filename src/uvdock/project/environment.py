"""The sync uvdock runs for a profile: the lane Dockerfile's selection plus the profile's,
inexact unless asked, never reinstalling what the base image provides."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.files import textlines

if TYPE_CHECKING:
    from uvdock.config.settings import Config
    from uvdock.project.dockerfile_sync import SyncSelection
    from uvdock.project.syncplan import SyncPlan


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
    from uvdock.project import pyproject, syncplan

    deps = pyproject.read(project)
    if created:
        deps = deps.declaring(groups=groups, extras=extras)
    dockerfile = repo / _lane_dockerfile(repo, config, profile)
    protected = pyproject.protected_packages(dockerfile, config.protected_packages)
    image = None if profile == "lint" else _image_selection(repo, dockerfile, profile, warn)
    return syncplan.build(
        profile,
        deps,
        groups=groups,
        extras=extras,
        protected=protected,
        image=image,
        exact=exact,
    )


def _lane_dockerfile(repo: Path, config: Config, profile: str) -> str:
    if profile != "lts":
        return config.dockerfile
    # Megatron-LM early 2026 had no LTS Dockerfile: its LTS rows built the dev one with
    # IMAGE_TYPE=lts, so that file (when it reads IMAGE_TYPE) holds the LTS selection.
    if not textlines.regular_file(repo / config.lts_dockerfile):
        try:
            dev_text = textlines.read_text(repo / config.dockerfile, newlines=True)
        except OSError:
            dev_text = ""
        if "IMAGE_TYPE" in dev_text:
            return config.dockerfile
    return config.lts_dockerfile


def _image_selection(
    repo: Path, path: Path, profile: str, warn: Callable[[str], None]
) -> SyncSelection | None:
    """What the lane's Dockerfile syncs into the image, for this machine's platform."""
    import platform

    from uvdock.project import dockerfile_sync

    try:
        text = textlines.read_text(path, newlines=True)
    except OSError:
        warn(f"{path.relative_to(repo)} not readable: the image's own selection is not known")
        return None
    machine = platform.machine().lower()
    selection = dockerfile_sync.read_selection(
        text,
        image_type="lts" if profile == "lts" else "dev",
        platform={"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine),
    )
    if not selection.found:
        warn(f"no `uv sync` line in {path.relative_to(repo)}: the profile's own selection only")
        return None
    return selection
