"""Concurrent uvdock runs on one repository (issue 12 §3), shared by tests and the stress script.

Each scenario builds a fresh repository, starts two real `python -m uvdock` processes at
the same moment and reports what came out: both exit codes, and whether the result is one
of the results running them one after the other gives (no lost update, no crash).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from conftest import commit_all, init_repo

from samples.pins import pin_files
from samples.recipes import MODEL, RECIPES


class Outcome(NamedTuple):
    codes: tuple[int, int]
    consistent: bool  # the repository holds what some sequential order gives
    errors: str

    @property
    def ok(self) -> bool:
        return self.consistent and all(code == 0 for code in self.codes)


def uvdock(repo: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "UVDOCK_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "uvdock", "--repo", str(repo), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _together(
    repo: Path, first: Sequence[str], second: Sequence[str]
) -> tuple[tuple[int, int], str]:
    runs = [uvdock(repo, *first), uvdock(repo, *second)]
    results = [run.communicate(timeout=120) for run in runs]
    codes = (runs[0].returncode, runs[1].returncode)
    errors = "".join(err for _, err in results if err.strip())
    return codes, errors


def _snapshot(repo: Path, files: Sequence[str]) -> tuple[bytes, ...]:
    return tuple((repo / f).read_bytes() for f in files)


def _sequential(
    make: Callable[[Path], Path],
    root: Path,
    orders: Sequence[Sequence[Sequence[str]]],
    files: Sequence[str],
) -> set[tuple[bytes, ...]]:
    expected = set()
    for number, order in enumerate(orders):
        repo = make(root / f"sequential{number}")
        for args in order:
            run = uvdock(repo, *args)
            _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
        expected.add(_snapshot(repo, files))
    return expected


def _race(
    make: Callable[[Path], Path],
    root: Path,
    first: Sequence[str],
    second: Sequence[str],
    files: Sequence[str],
    rounds: int,
) -> list[Outcome]:
    expected = _sequential(make, root, [[first, second], [second, first]], files)
    outcomes = []
    for number in range(rounds):
        repo = make(root / f"race{number}")
        codes, errors = _together(repo, first, second)
        outcomes.append(Outcome(codes, _snapshot(repo, files) in expected, errors))
        shutil.rmtree(repo, ignore_errors=True)
    return outcomes


def recipe_repo(path: Path) -> Path:
    init_repo(path)
    (path / RECIPES).mkdir(parents=True)
    (path / RECIPES / "model.yaml").write_text(MODEL)
    commit_all(path)
    return path


def pins_repo(path: Path) -> Path:
    init_repo(path)
    for rel, text in pin_files().items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_bytes(text if isinstance(text, bytes) else text.encode())
    commit_all(path)
    return path


def mark_broken_race(root: Path, rounds: int) -> list[Outcome]:
    """Two `recipe mark-broken` on one file, different cases: both marks must land."""
    mark = ("recipe", "mark-broken", "--issue", "7", "--reason", "flaky")
    return _race(
        recipe_repo, root, (*mark, "alpha"), (*mark, "beta"), [f"{RECIPES}/model.yaml"], rounds
    )


def bump_race(root: Path, rounds: int) -> list[Outcome]:
    """`image bump` racing `image bump --lts`: both lanes' pins must move."""
    files = [".gitlab/stages/01.build.yml", "docker/.ngc_version.dev", "docker/.ngc_version.lts"]
    return _race(
        pins_repo,
        root,
        ("image", "bump", "26.09-py3"),
        ("image", "bump", "26.08-py3", "--lts"),
        files,
        rounds,
    )


def resolve_race(root: Path, wheels: Path, rounds: int) -> list[Outcome]:
    """Two `lock resolve` together: one resolves, the other then finds nothing to do."""
    from samples.lock_conflicts import make_conflict

    args = ("--engine", "local", "lock", "resolve", "--onto", "main", "--no-fetch")
    outcomes = []
    for number in range(rounds):
        conflict = make_conflict(root / f"resolve{number}", wheels, "merge")
        codes, errors = _together(conflict.repo, args, args)
        lock = (conflict.repo / "uv.lock").read_bytes()
        state = conflict.repo / ".git" / "uvdock" / "resolve-state"
        unmerged = subprocess.run(
            ["git", "-C", str(conflict.repo), "ls-files", "-u", "uv.lock"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        consistent = b"<<<<<<<" not in lock and not unmerged and not state.exists()
        outcomes.append(Outcome(codes, consistent, errors))
        shutil.rmtree(conflict.repo.parent, ignore_errors=True)
    return outcomes
