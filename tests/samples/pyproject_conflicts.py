"""Real pyproject.toml + uv.lock conflicts: both branches edited the same dependency list.

Each side is locked by the host's real `uv lock` from the offline wheel folder
(lockconflict.build_wheels); then a real `git merge`, `git rebase` or `git cherry-pick`
stops with both files unmerged.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import commit_all, git, init_repo

from samples.lock_conflicts import Conflict, lock_once, snapshot

BASE = """\
[project]
name = "demo"
version = "0.1.0"
requires-python = ">=3.11"
# Runtime dependencies: both branches add here.
dependencies = [
    "delta",
    "gamma<2",  # gamma 2 breaks the demo
]

[project.optional-dependencies]
extra = [
    "delta",
]

[dependency-groups]
feature = [
    "delta",
]

[tool.uv]
no-index = true
find-links = ["wheels"]
package = false
"""

# Where an entry goes to be appended to each list (the line it follows).
ANCHORS = {
    "dependencies": 'dependencies = [\n    "delta",\n',
    "extra": '[project.optional-dependencies]\nextra = [\n    "delta",\n',
    "group": '[dependency-groups]\nfeature = [\n    "delta",\n',
}


def add_to(text: str, where: str, entry: str) -> str:
    anchor = ANCHORS[where]
    assert text.count(anchor) == 1, anchor
    return text.replace(anchor, f'{anchor}    "{entry}",\n')


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def _commit_locked(repo: Path, text: str, message: str) -> None:
    (repo / "pyproject.toml").write_text(text)
    lock_once(repo)
    commit_all(repo, message)


def make_pyproject_conflict(
    root: Path,
    wheels: Path,
    operation: str,
    *,
    main: str,
    feature: str,
    base: str = BASE,
    main_pkg: str = "alpha",
    feature_pkg: str = "beta",
) -> Conflict:
    """A repo stopped in `operation` with pyproject.toml and uv.lock both unmerged."""
    repo = init_repo(root / f"repo-{operation}")
    shutil.copytree(wheels, repo / "wheels")
    _commit_locked(repo, base, "initial")
    git(repo, "checkout", "-q", "-b", "feature")
    _commit_locked(repo, feature, "feature: its pyproject.toml edit")
    git(repo, "checkout", "-q", "main")
    _commit_locked(repo, main, "main: its pyproject.toml edit")
    if operation == "merge":
        git(repo, "checkout", "-q", "feature")
        git(repo, "merge", "--no-edit", "main", check=False)
    elif operation == "rebase":
        git(repo, "checkout", "-q", "feature")
        git(repo, "rebase", "main", check=False)
    elif operation == "cherry-pick":
        git(repo, "cherry-pick", "feature", check=False)
    else:
        raise ValueError(operation)
    assert git(repo, "ls-files", "-u", "pyproject.toml"), f"{operation}: pyproject.toml merged"
    return Conflict(repo, main_pkg, feature_pkg)


def full_snapshot(repo: Path) -> tuple[object, ...]:
    """Bytes of both files and every index stage of every path."""
    return (snapshot(repo), git(repo, "ls-files", "-u"), (repo / "pyproject.toml").read_bytes())
