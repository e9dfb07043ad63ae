"""Containers already checked to run and mount this repository at the workdir.

The check (an inspect) is the slow part of a cached exec, so its answer is kept in the git
dir, keyed by engine, container, workdir and repository path: mounts never change after a
container is created, so a verified id stays valid until the container is gone.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from uvdock.errors import EnvironmentUnusable
from uvdock.run import engines

_CACHE_FILE = "verified-containers"


def key(placement: engines.Placement, workdir: str, repo: Path) -> str:
    return f"{placement.engine}:{placement.container}:{workdir}:{repo}"


def verify(placement: engines.Placement, workdir: str, repo: Path, env: Mapping[str, str]) -> str:
    """The container's id, after checking it runs and mounts `repo` at `workdir`."""
    from uvdock.run import probe  # only on the uncached path: the cached exec skips it

    info = probe.container(placement.engine, placement.container, env)
    if info is None:
        raise EnvironmentUnusable(
            f"no container named {placement.container} ({placement.engine} container inspect failed)",
            hint="start one with the repository mounted, or use --image to run a fresh container",
        )
    if not info.running:
        raise EnvironmentUnusable(
            f"container {placement.container} is not running (start it first)"
        )
    source = engines.mounted_at(info.mounts, workdir)
    if source is None or Path(source).resolve() != repo.resolve():
        where = f"mounts {source}" if source else "mounts nothing"
        raise EnvironmentUnusable(
            f"container {placement.container} {where} at {workdir}, not this repository "
            f"({repo.resolve()}); refusing to run uv on another checkout",
            hint=f"start a container with -v {repo.resolve()}:{workdir}, or use --image",
        )
    remember(repo, key(placement, workdir, repo), info.id)
    return info.id


def _path(repo: Path) -> Path:
    from uvdock.run import git

    return git.git_dir(repo) / "uvdock" / _CACHE_FILE


def _read(repo: Path) -> dict[str, str]:
    # Tab-separated lines rather than JSON: this is read on every exec, and importing
    # json is a measurable share of that path's start-up budget.
    from uvdock.files import textlines

    try:
        text = textlines.read_text(_path(repo), errors="replace", newlines=True)
    except OSError:
        return {}
    pairs = (line.split("\t", 1) for line in text.splitlines() if "\t" in line)
    return {key: value for key, value in pairs}


def lookup(repo: Path, key: str) -> str | None:
    return _read(repo).get(key) or None


def remember(repo: Path, key: str, container_id: str | None) -> None:
    """Record (or, with None, forget) the verified id for `key`."""
    data = _read(repo)
    if container_id is None:
        data.pop(key, None)
    else:
        data[key] = container_id
    from uvdock.files.edit import atomic_write

    path = _path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, "".join(f"{k}\t{v}\n" for k, v in sorted(data.items())))
