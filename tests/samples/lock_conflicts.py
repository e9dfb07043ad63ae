"""Real uv.lock conflicts for the `lock resolve` tests.

Each side of the conflict is locked by the host's real `uv lock` from the test wheelhouse
(tests/samples/wheels.py) copied inside the repository (`wheels/`, so a container sees it at /workspace/wheels); then a
real `git merge`, `git rebase` or `git cherry-pick` stops on uv.lock.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from conftest import commit_all, git, init_repo


def pyproject(main_deps: tuple[str, ...] = (), group_deps: tuple[str, ...] = ()) -> str:
    """Dependencies and the `feature` group sit far apart, so each side's edit merges cleanly."""
    deps = "".join(f'    "{d}",\n' for d in ("delta", *main_deps))
    group = "".join(f'    "{d}",\n' for d in ("delta", *group_deps))
    return (
        '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
        f"dependencies = [\n{deps}]\n\n"
        "# Unchanged lines between the two lists keep the two edits apart for git.\n"
        "# (main edits the list above, the feature branch the list below)\n\n"
        f"[dependency-groups]\nfeature = [\n{group}]\n\n"
        '[tool.uv]\nno-index = true\nfind-links = ["wheels"]\npackage = false\n'
    )


def uv_lock(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["uv", "lock", *args], cwd=repo, capture_output=True, text=True, check=False
    )


# uv.lock by (pyproject text, wheel names): the lock names its wheels by relative path, so a
# lock real uv wrote for one repository is the lock it writes for the next with the same
# inputs. One `uv lock` per distinct side and worker instead of three per conflict.
_LOCKS: dict[tuple[str, tuple[str, ...]], bytes] = {}


def lock_once(repo: Path) -> None:
    """`uv lock` in `repo`, or the bytes it wrote for the same pyproject and wheels before."""
    wheels = repo / "wheels"
    key = (
        (repo / "pyproject.toml").read_text(),
        tuple(sorted(p.name for p in wheels.iterdir())) if wheels.is_dir() else (),
    )
    cached = _LOCKS.get(key)
    if cached is not None:
        (repo / "uv.lock").write_bytes(cached)
        return
    locked = uv_lock(repo)
    assert locked.returncode == 0, locked.stderr
    _LOCKS[key] = (repo / "uv.lock").read_bytes()


def _commit_locked(repo: Path, text: str, message: str) -> None:
    (repo / "pyproject.toml").write_text(text)
    lock_once(repo)
    commit_all(repo, message)


@dataclass
class Conflict:
    repo: Path
    main_pkg: str
    feature_pkg: str

    @property
    def lock(self) -> Path:
        return self.repo / "uv.lock"


def make_conflict(
    root: Path,
    wheels: Path,
    operation: str,
    *,
    main_pkg: str = "alpha",
    feature_pkg: str = "beta",
    feature_in_dependencies: bool = False,
    with_origin: bool = False,
) -> Conflict:
    """A repo stopped in `operation` ('merge', 'rebase', 'cherry-pick', 'am') on a uv.lock conflict.

    main adds `main_pkg` to the dependencies; the feature branch adds `feature_pkg` to the
    `feature` group, or, with `feature_in_dependencies`, next to main's edit (a
    pyproject.toml conflict as well).
    """
    repo = init_repo(root / f"repo-{operation}")
    shutil.copytree(wheels, repo / "wheels")
    _commit_locked(repo, pyproject(), "initial")
    if with_origin:
        origin = root / "origin.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(origin)], check=True)
        git(repo, "remote", "add", "origin", str(origin))
        git(repo, "fetch", "-q", "origin")
    git(repo, "checkout", "-q", "-b", "feature")
    if feature_in_dependencies:
        _commit_locked(repo, pyproject(main_deps=(feature_pkg,)), f"feature: add {feature_pkg}")
    else:
        _commit_locked(repo, pyproject(group_deps=(feature_pkg,)), f"feature: add {feature_pkg}")
    git(repo, "checkout", "-q", "main")
    _commit_locked(repo, pyproject(main_deps=(main_pkg,)), f"main: add {main_pkg}")
    if with_origin:
        git(repo, "push", "-q", "origin", "main")
        # The local origin/main stays one commit behind: only a fetch brings main's lock.
        behind = git(repo, "rev-parse", "main~1").strip()
        git(repo, "update-ref", "refs/remotes/origin/main", behind)
    if operation == "merge":
        git(repo, "checkout", "-q", "feature")
        stopped = git(repo, "merge", "--no-edit", "main", check=False)
    elif operation == "rebase":
        git(repo, "checkout", "-q", "feature")
        stopped = git(repo, "rebase", "main", check=False)
    elif operation == "cherry-pick":
        stopped = git(repo, "cherry-pick", "feature", check=False)
    elif operation == "am":
        patch = root / f"feature-{operation}.patch"
        patch.write_text(git(repo, "format-patch", "-1", "--stdout", "feature"))
        stopped = git(repo, "am", "-3", str(patch), check=False)
    else:
        raise ValueError(operation)
    del stopped
    assert git(repo, "ls-files", "-u", "uv.lock"), f"{operation} did not stop on uv.lock"
    return Conflict(repo, main_pkg, feature_pkg)


@dataclass(frozen=True)
class Snapshot:
    """Everything `lock resolve` could touch, to compare byte for byte."""

    lock: bytes | None
    unmerged: str
    stages: str
    status: str
    pyproject: bytes


def snapshot(repo: Path) -> Snapshot:
    lock = repo / "uv.lock"
    return Snapshot(
        lock.read_bytes() if lock.exists() else None,
        git(repo, "ls-files", "-u", "uv.lock"),
        git(repo, "ls-files", "-s"),
        git(repo, "status", "--porcelain=v1", "--untracked-files=all"),
        (repo / "pyproject.toml").read_bytes(),
    )


def status_without_lock(repo: Path) -> list[str]:
    lines = git(repo, "status", "--porcelain=v1", "--untracked-files=all").splitlines()
    return [line for line in lines if not line.endswith(" uv.lock")]
