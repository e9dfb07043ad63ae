"""`uvdock lock resolve` started inside a nested uv project resolves that project's lock.

The checkout's root is one uv project; `infra/tool/` is another (its own pyproject.toml,
uv.lock and wheel folder, not a workspace member). Both branches add a dependency to the
tool, so a real `git merge` stops with `infra/tool/pyproject.toml` and `infra/tool/uv.lock`
unmerged; the relock is real uv (--engine local) from the tool's offline wheels.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git, init_repo
from samples.lock_conflicts import lock_once, pyproject, uv_lock
from samples.pyproject_conflicts import BASE, add_to

from uvdock.commands.lock.resolve import RepoIndex
from uvdock.files import state_store
from uvdock.lock import lockfile

TOOL = "infra/tool"
LOCAL = ("--engine", "local")


def _commit_tool(repo: Path, text: str, message: str) -> None:
    (repo / TOOL / "pyproject.toml").write_text(text)
    lock_once(repo / TOOL)
    commit_all(repo, message)


def _stop_in_a_merge(wheelhouse: Path, root: Path, base: str, main: str, feature: str) -> Path:
    """Stopped in a merge of `main` into `feature`, on the tool's two files only."""
    repo = init_repo(root / "repo")
    shutil.copytree(wheelhouse, repo / "wheels")
    (repo / "pyproject.toml").write_text(pyproject())
    lock_once(repo)
    (repo / TOOL).mkdir(parents=True)
    shutil.copytree(wheelhouse, repo / TOOL / "wheels")
    _commit_tool(repo, base, "two projects")
    git(repo, "checkout", "-q", "-b", "feature")
    _commit_tool(repo, feature, "feature: the tool needs more")
    git(repo, "checkout", "-q", "main")
    _commit_tool(repo, main, "main: the tool needs more")
    git(repo, "checkout", "-q", "feature")
    git(repo, "merge", "--no-edit", "main", check=False)
    assert f"{TOOL}/uv.lock" in git(repo, "diff", "--name-only", "--diff-filter=U").split()
    return repo


@pytest.fixture
def nested_conflict(wheelhouse: Path, tmp_path: Path) -> Path:
    main, feature = add_to(BASE, "dependencies", "alpha"), add_to(BASE, "dependencies", "beta")
    repo = _stop_in_a_merge(wheelhouse, tmp_path, BASE, main, feature)
    unmerged = git(repo, "diff", "--name-only", "--diff-filter=U").split()
    assert unmerged == [f"{TOOL}/pyproject.toml", f"{TOOL}/uv.lock"]
    return repo


def _root_files(repo: Path) -> list[bytes]:
    return [(repo / name).read_bytes() for name in ("pyproject.toml", "uv.lock")]


@pytest.mark.parametrize("started", ["inside", "--repo"])
def test_resolves_stages_and_names_the_nested_lock(
    started: str, nested_conflict: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = nested_conflict
    root_before = _root_files(repo)
    main_lock = git(repo, "show", f"main:{TOOL}/uv.lock")
    if started == "inside":
        monkeypatch.chdir(repo / TOOL / "wheels")
        result = run_cli(*LOCAL, "lock", "resolve", "--no-fetch")
    else:  # `--repo` names the project from outside the checkout
        result = run_cli("--repo", repo / TOOL, *LOCAL, "lock", "resolve", "--no-fetch")
    assert result.code == 0, result.err
    assert git(repo, "ls-files", "-u") == ""
    assert git(repo, "diff", "--name-only") == ""  # what is staged is what is on disk
    lock = (repo / TOOL / "uv.lock").read_bytes()
    assert not lockfile.has_conflict_markers(lock)
    assert {"alpha", "beta"} <= set(lockfile.read_packages(lock))
    deps = tomllib.loads((repo / TOOL / "pyproject.toml").read_text())["project"]["dependencies"]
    assert {"alpha", "beta"} <= set(deps)
    assert uv_lock(repo / TOOL, "--check").returncode == 0
    assert _root_files(repo) == root_before  # the root project is not touched
    assert git(repo, "diff", "--cached", "--name-only", "--", "uv.lock", "pyproject.toml") == ""
    assert f"resolved {TOOL}/uv.lock on top of main" in result.out
    assert f"merged {TOOL}/pyproject.toml" in result.out
    # The relock started from main's lock of the tool: what the branch adds is beta alone.
    diff = lockfile.diff_locks(main_lock.encode(), lock)
    assert [p.name for p in diff.added] == ["beta"]
    assert not state_store.state_dir(repo / ".git").exists()
    git(repo, "commit", "-q", "--no-edit")
    assert git(repo, "status", "--porcelain") == ""


def test_dry_run_plans_uv_in_the_nested_project(
    nested_conflict: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = nested_conflict
    before = git(repo, "ls-files", "-s"), (repo / TOOL / "uv.lock").read_bytes()
    monkeypatch.chdir(repo / TOOL)
    result = run_cli(*LOCAL, "--dry-run", "lock", "resolve", "--no-fetch")
    assert result.code == 0, result.err
    said = result.out + result.err
    assert f"--directory {TOOL}" in said
    assert f"git add -- {TOOL}/uv.lock" in said
    assert (git(repo, "ls-files", "-s"), (repo / TOOL / "uv.lock").read_bytes()) == before
    planned = run_cli(*LOCAL, "--json", "--dry-run", "lock", "resolve", "--no-fetch")
    assert planned.code == 0, planned.err
    assert json.loads(planned.out)["lock"] == f"{TOOL}/uv.lock"


def test_abort_from_inside_restores_the_nested_files(
    nested_conflict: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = nested_conflict
    lock, project = f"{TOOL}/uv.lock", f"{TOOL}/pyproject.toml"
    before = (
        git(repo, "ls-files", "-s"),
        (repo / lock).read_bytes(),
        (repo / project).read_bytes(),
    )
    # What a run killed after its save and mid-relock leaves behind.
    state_store.save(RepoIndex(repo), lock, ref="main", operation="merge", also=(project,))
    (repo / lock).write_bytes(b"half written\n")
    git(repo, "add", lock, project)
    monkeypatch.chdir(repo / TOOL)
    blocked = run_cli(*LOCAL, "lock", "resolve", "--no-fetch")
    assert blocked.code == 2 and "--abort" in blocked.err
    aborted = run_cli("lock", "resolve", "--abort")
    assert aborted.code == 0, aborted.err
    assert f"restored {lock} and {project}" in aborted.out
    after = (
        git(repo, "ls-files", "-s"),
        (repo / lock).read_bytes(),
        (repo / project).read_bytes(),
    )
    assert after == before


def test_a_relock_that_cannot_resolve_blames_the_nested_project(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # lowpin needs gamma<2, highpin gamma>=2: each side locks, the merge cannot. The root's
    # own lock is fine, so only a question asked in infra/tool tells uv's failure apart
    # from the network's.
    main, feature = pyproject(main_deps=("lowpin",)), pyproject(group_deps=("highpin",))
    repo = _stop_in_a_merge(wheelhouse, tmp_path, pyproject(), main, feature)
    lock, project = f"{TOOL}/uv.lock", f"{TOOL}/pyproject.toml"
    before = (
        git(repo, "ls-files", "-s"),
        (repo / lock).read_bytes(),
        (repo / project).read_bytes(),
    )
    monkeypatch.chdir(repo / TOOL)
    result = run_cli(*LOCAL, "lock", "resolve", "--no-fetch")
    assert result.code == 1, result.err
    assert f"on top of main's {lock}" in result.err
    assert f"usually in {project}" in result.err and "network" not in result.err
    assert f"{lock} and their index entries are back" in result.err
    after = (
        git(repo, "ls-files", "-s"),
        (repo / lock).read_bytes(),
        (repo / project).read_bytes(),
    )
    assert after == before
    assert not state_store.state_dir(repo / ".git").exists()
