"""A fork's defaults point at upstream: with an `upstream` remote, the base is upstream/main.

A real fork: `origin` is the contributor's own copy, cloned before upstream moved on
(its main is stale), `upstream` is the project; a feature branch starts on upstream/main.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git, init_repo


def block(name: str, version: str) -> str:
    return (
        f'\n[[package]]\nname = "{name}"\nversion = "{version}"\n'
        'source = { registry = "https://pypi.org/simple" }\n'
    )


LOCK = "version = 1\nrevision = 2\n"


def _bare(project: Path, path: Path) -> Path:
    subprocess.run(["git", "clone", "-q", "--bare", str(project), str(path)], check=True)
    return path


def _feature_clone(origin: Path, upstream: Path, work: Path) -> Path:
    """A contributor's clone of `origin` with `upstream` added and fetched, on a branch
    started from upstream/main."""
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True)
    git(work, "remote", "add", "upstream", str(upstream))
    git(work, "fetch", "-q", "upstream")
    git(work, "checkout", "-q", "-b", "feature", "upstream/main")
    return work


@pytest.fixture
def fork(make_repo: Callable[..., Path], tmp_path: Path) -> Path:
    project = make_repo({"uv.lock": LOCK + block("alpha", "1.0"), "pyproject.toml": "[project]\n"})
    stale = _bare(project, tmp_path / "fork.git")
    (project / "uv.lock").write_text(LOCK + block("alpha", "1.0") + block("upstreamonly", "3.0"))
    commit_all(project, "upstream adds upstreamonly")
    work = _feature_clone(stale, _bare(project, tmp_path / "upstream.git"), tmp_path / "work")
    lock = LOCK + block("alpha", "1.0") + block("upstreamonly", "3.0") + block("mine", "0.1")
    (work / "uv.lock").write_text(lock)
    return work


def test_lock_diff_compares_with_upstream_main_and_says_so(fork: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", fork, "lock", "diff")
    assert result.code == 0, result.err
    first = result.out.splitlines()[0]
    assert "upstream/main" in first and "`upstream` remote" in first
    assert "upstream/main -> working tree: 1 added, 0 removed, 0 changed" in result.out
    assert "upstreamonly" not in result.out  # upstream's change is not the branch's


def test_a_configured_base_ref_still_wins(
    fork: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UVDOCK_BASE_REF", "origin/main")
    result = run_cli("--repo", fork, "lock", "diff")
    assert result.code == 0, result.err
    assert "origin/main -> working tree: 2 added" in result.out
    assert "`upstream` remote" not in result.out


def test_doctor_names_the_fork_base_once(fork: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", fork, "--engine", "local", "doctor")
    said = result.out + result.err
    assert said.count("upstream/main") == 1
    line = next(line for line in result.out.splitlines() if "upstream/main" in line)
    assert line.startswith("[ok  ] base ref: base-ref upstream/main, the default in a fork")


def test_lock_diff_in_a_fork_compares_with_the_merge_base(
    tmp_path: Path, wheelhouse: Path, run_cli: RunCli
) -> None:
    """Upstream moved on after the branch started: its new package is not the branch's
    removal. Real locks (`uv lock` on the wheelhouse), a real fork clone and fetch."""
    from samples.lock_conflicts import lock_once, pyproject

    def commit_locked(repo: Path, text: str, message: str) -> None:
        (repo / "pyproject.toml").write_text(text)
        lock_once(repo)
        commit_all(repo, message)

    project = init_repo(tmp_path / "project")
    shutil.copytree(wheelhouse, project / "wheels")
    commit_locked(project, pyproject(), "initial")
    upstream = _bare(project, tmp_path / "upstream.git")
    work = _feature_clone(upstream, upstream, tmp_path / "work")
    started = git(work, "rev-parse", "HEAD").strip()
    commit_locked(work, pyproject(group_deps=("gamma",)), "feature: add gamma")
    commit_locked(project, pyproject(main_deps=("alpha",)), "upstream: add alpha")
    git(project, "push", "-q", str(upstream), "main")
    git(work, "fetch", "-q", "upstream")
    assert "alpha" in git(work, "show", "upstream/main:uv.lock")

    result = run_cli("--repo", work, "--json", "lock", "diff")
    assert result.code == 0, result.err
    diff = json.loads(result.out)
    assert [a["name"] for a in diff["added"]] == ["gamma"]
    assert diff["removed"] == [] and diff["changed"] == []
    said = run_cli("--repo", work, "lock", "diff")
    assert said.code == 0, said.err
    first = said.out.splitlines()[0]
    assert "merge-base" in first and started[:12] in first and "upstream/main" in first
    assert "1 added, 0 removed, 0 changed" in said.out
