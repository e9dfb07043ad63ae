"""Whether the engine can parse a Dockerfile's heredocs (`RUN <<EOF`), decided before a build:
BuildKit does, Docker's legacy builder never did, buildah from 1.33 (containers/buildah#5092)
but Debian and Ubuntu packages only from 1.35 (#5474). Otherwise the build fails minutes in
with `Unknown instruction: "APT-GET"`. Pure: run/build_check asks the engine."""

from __future__ import annotations

import re
from typing import NamedTuple

BUILDAH_FIRST = (1, 33)  # buildah that first parses heredocs

WHAT_WORKS = (
    "podman 5 or later (buildah >= 1.35), or docker with BuildKit (the buildx plugin; "
    "DOCKER_BUILDKIT not 0)"
)


def first_heredoc(text: str) -> int | None:
    """The 1-based line of the first RUN/COPY/ADD instruction that opens a heredoc."""
    from uvdock.image.dockerfile import read

    return next((i.line for i in read(text).instructions if i.heredocs), None)


class Builder(NamedTuple):
    cli: str  # docker or podman: the program uvdock runs
    version: str  # that engine's version ("" when it did not say)
    buildah: str = ""  # podman: the buildah it builds with
    podman_server: str = ""  # the docker CLI talking to podman's socket: podman's version
    buildkit: bool = True  # docker: BuildKit builds (the buildx plugin, DOCKER_BUILDKIT != 0)
    buildkit_why: str = ""  # why not, when it does not


class Verdict(NamedTuple):
    refuse: bool  # False: a warning (may fail), True: will fail
    message: str


def verdict(builder: Builder, dockerfile: str, line: int) -> Verdict | None:
    """None when the builder parses heredocs (or cannot be told apart from one that does)."""
    where = f"{dockerfile} uses heredocs (`RUN <<EOF`, line {line})"
    if builder.cli == "podman":
        name = f"podman {builder.version} (buildah {builder.buildah or 'version unknown'})"
        # Distribution packages parse them only from buildah 1.35.
        version, first, everywhere = builder.buildah, BUILDAH_FIRST, (1, 35)
    elif builder.podman_server:
        name = f"podman {builder.podman_server} behind the docker CLI (it builds with buildah)"
        # podman 4.8 ships buildah 1.33, podman 5.0 buildah 1.35.
        version, first, everywhere = builder.podman_server, (4, 8), (5, 0)
    elif not builder.buildkit:
        name = f"docker {builder.version}".strip()
        why = f"without BuildKit cannot parse ({builder.buildkit_why})"
        return Verdict(True, f"{where}, which {name} {why}")
    else:
        return None
    match = re.match(r"\s*v?(\d+)\.(\d+)", version)
    found = (int(match[1]), int(match[2])) if match else None
    if found is None or found >= everywhere:
        return None
    if found < first:
        return Verdict(True, f"{where}, which {name} cannot parse")
    return Verdict(
        False,
        f"{where}: {name} parses them only in upstream builds; Debian and Ubuntu packages "
        'of this version stop with `Unknown instruction: "APT-GET"`',
    )
