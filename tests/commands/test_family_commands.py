"""Every command on a repository of the family that is not laid out like Megatron-LM.

The repositories (samples.family's shapes: `docker/Dockerfile.ci` with `ARG BASE_IMAGE` built
by a GitHub workflow, two bases in one Dockerfile, other NVIDIA images, a pin file read by
CI, Megatron-LM's ARG name in another file; each with a uv project resolving from its own
wheel folder; no LTS files, no recipes, no GitLab remote) are what a maintainer of another
NVIDIA training repository has. Each command either works, or exits 2 or 3 with one `error:` line (and at
most one `hint:` line) naming what this repository lacks and the `[tool.uvdock]` key that
points uvdock at it: never a traceback, never Megatron-LM's files or images offered as this
repository's.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import RunCli, commit_all
from samples import family
from samples.lock_conflicts import lock_once
from samples.wheels import project_pyproject

ENGINE = ("--engine", "podman")  # only printed: every command that would start one is a dry run
LOCAL = ("--engine", "local")


SHAPES = [
    "BASE_IMAGE_ARG",
    "TWO_BASES",
    "OTHER_IMAGES",
    "PIN_FILE_AND_ENV",
    "FROM_IMAGE_NAME_ELSEWHERE",
]


@pytest.fixture(params=SHAPES)
def trainer(
    request: pytest.FixtureRequest,
    make_repo: Callable[..., Path],
    wheelhouse: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    files = {**getattr(family, request.param), "pyproject.toml": project_pyproject(("alpha",))}
    repo = make_repo(files, "trainer")
    shutil.copytree(wheelhouse, repo / "wheels")
    lock_once(repo)
    commit_all(repo, "locked")
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")
    return repo


class Works(NamedTuple):
    argv: tuple[str, ...]
    says: str = ""  # in the output when it works


class Lacks(NamedTuple):
    argv: tuple[str, ...]
    code: int
    missing: str  # what this repository lacks, named in the error line
    key: str  # the [tool.uvdock] key (or the option) that points uvdock at it


WORKS = [
    Works(("--dry-run", *ENGINE, "run", "--", "true"), "trainer:local"),
    Works(("--dry-run", *ENGINE, "shell"), "trainer:local"),
    Works(("--dry-run", *LOCAL, "add", "beta"), "uv add --no-sync beta"),
    Works(("--dry-run", *LOCAL, "remove", "alpha"), "uv remove --no-sync alpha"),
    Works(("--dry-run", *LOCAL, "lock"), "uv lock"),
    Works((*LOCAL, "lock", "--check"), "up to date"),
    Works((*LOCAL, "lock", "resolve"), "no conflict"),
    Works(("--dry-run", *LOCAL, "sync"), "uv sync --locked --inexact"),
    Works(("image", "show"), "managed"),
    Works(("image", "check"), "base-image pins agree"),
    Works(("--dry-run", "image", "bump", "26.07-py3"), "would change; nothing written"),
    Works(("--dry-run", *ENGINE, "image", "build"), "-t trainer:local ."),
    Works(("--dry-run", *ENGINE, "image", "enroot"), "-o trainer.sqsh podman://trainer:local"),
    Works(
        ("--dry-run", *ENGINE, "image", "enroot", "--lts"),
        "-o trainer-lts.sqsh podman://trainer:local-lts",
    ),
    Works(("--dry-run", "merge-driver", "install"), "merge=uvdock-lock"),
    Works(("trust", "--show"), "nothing to trust"),
]

LACKS = [
    Lacks(("lock", "diff"), 2, "origin/main", "base-ref"),
    Lacks(("--dry-run", *LOCAL, "sync", "--profile", "lint"), 2, "linting", "--group"),
    Lacks(
        ("--dry-run", *LOCAL, "sync", "--profile", "lts", "--lts"),
        3,
        "docker/lts/requirements.txt",
        "lts-requirements",
    ),
    Lacks(("lts", "show"), 3, "docker/lts/requirements.txt", "lts-requirements"),
    Lacks(("lts", "check"), 3, "docker/lts/requirements.txt", "lts-requirements"),
    Lacks(("lts", "drift"), 3, "docker/lts/requirements.txt", "lts-requirements"),
    Lacks(
        ("--dry-run", "lts", "pin", "alpha==1.0.0", "--lts"),
        3,
        "docker/lts/requirements.txt",
        "lts-requirements",
    ),
    Lacks(("--dry-run", "image", "bump", "26.07-py3", "--lts"), 2, "lts", "lts-pin-file"),
    Lacks(("image", "tags"), 2, "offline", "offline"),
    Lacks(
        ("--dry-run", *ENGINE, "image", "build", "--lts"), 3, "Dockerfile.ci.lts", "lts-dockerfile"
    ),
    Lacks(("--dry-run", *ENGINE, "image", "pull"), 3, "registry", "registry-image"),
    Lacks(("--dry-run", *ENGINE, "image", "pull", "--lts"), 3, "registry", "lts-registry-image"),
    Lacks(("recipe", "show"), 2, "tests/test_utils/recipes", "recipes-dir"),
    Lacks(
        ("--dry-run", "recipe", "mark-broken", "x", "--issue", "1", "--reason", "r"),
        2,
        "tests/test_utils/recipes",
        "recipes-dir",
    ),
    Lacks(("--dry-run", "recipe", "unmark", "x"), 2, "tests/test_utils/recipes", "recipes-dir"),
]


def _said(argv: tuple[str, ...]) -> str:
    return " ".join(argv)


@pytest.mark.parametrize("case", WORKS, ids=[_said(c.argv) for c in WORKS])
def test_works(case: Works, trainer: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", trainer, *case.argv)
    assert result.code == 0, result.err
    said = result.out + result.err
    assert case.says in said
    assert "megatron" not in said.lower()  # nothing of Megatron-LM offered as this repo's
    assert "Traceback" not in said


@pytest.mark.parametrize("case", LACKS, ids=[_said(c.argv) for c in LACKS])
def test_says_what_is_missing_and_the_key(case: Lacks, trainer: Path, run_cli: RunCli) -> None:
    before = _files(trainer)
    result = run_cli("--repo", trainer, *case.argv)
    assert result.code == case.code, result.err
    lines = result.err.splitlines()
    assert len(lines) in (1, 2), result.err
    assert lines[0].startswith("error: ") and case.missing in lines[0], result.err
    assert all(line.startswith("hint: ") for line in lines[1:]), result.err
    assert case.key in result.err
    assert "Traceback" not in result.out + result.err
    assert _files(trainer) == before  # nothing changed


def test_doctor_checks_this_repository(trainer: Path, run_cli: RunCli) -> None:
    # uv runs here (--engine local): what fails is this machine's venv, a finding (exit 1).
    result = run_cli("--repo", trainer, *LOCAL, "doctor")
    assert result.code in (0, 1), result.err
    assert "the managed base-image pins agree" in result.out
    assert "Traceback" not in result.out + result.err


def _files(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }
