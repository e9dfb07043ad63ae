"""`uvdock lock diff [BASE [HEAD]]`: revisions, paths, defaults, --json, markers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git


def block(name: str, version: str) -> str:
    return (
        f'\n[[package]]\nname = "{name}"\nversion = "{version}"\n'
        'source = { registry = "https://pypi.org/simple" }\n'
    )


BASE = "version = 1\nrevision = 2\n" + block("alpha", "1.0") + block("beta", "2.0")
HEAD = "version = 1\nrevision = 2\n" + block("alpha", "1.1") + block("gamma", "0.3")


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    repo = make_repo({"uv.lock": BASE, "pyproject.toml": '[project]\nname = "demo"\n'})
    git(repo, "branch", "base")
    (repo / "uv.lock").write_text(HEAD)
    return repo


def test_revision_vs_working_tree_json(repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", repo, "--json", "lock", "diff", "base")
    assert result.code == 0, result.err
    assert json.loads(result.out) == {
        "command": "lock diff",
        "ok": True,
        "exit_code": 0,
        "dry_run": False,
        "added": [{"name": "gamma", "versions": ["0.3"]}],
        "removed": [{"name": "beta", "versions": ["2.0"]}],
        "changed": [{"name": "alpha", "from": ["1.0"], "to": ["1.1"]}],
    }


def test_default_base_is_origin_main(repo: Path, run_cli: RunCli) -> None:
    git(repo, "update-ref", "refs/remotes/origin/main", "base")
    result = run_cli("--repo", repo, "lock", "diff")
    assert result.code == 0, result.err
    out = result.out
    assert "origin/main -> working tree: 1 added, 1 removed, 1 changed" in out
    assert "alpha" in out and "1.0" in out and "1.1" in out and "gamma" in out and "beta" in out


def test_missing_default_base_is_refused(repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", repo, "lock", "diff")
    assert result.code == 2
    assert "origin/main" in result.err


def test_two_revisions_and_two_paths(repo: Path, tmp_path: Path, run_cli: RunCli) -> None:
    commit_all(repo, "head")
    by_rev = run_cli("--repo", repo, "--json", "lock", "diff", "base", "HEAD")
    (tmp_path / "a.lock").write_text(BASE)
    folder = tmp_path / "checkout"
    folder.mkdir()
    (folder / "uv.lock").write_text(HEAD)
    by_path = run_cli("--repo", repo, "--json", "lock", "diff", tmp_path / "a.lock", folder)
    assert by_rev.code == by_path.code == 0
    assert json.loads(by_rev.out) == json.loads(by_path.out)
    same = run_cli("--repo", repo, "lock", "diff", "HEAD", "HEAD")
    assert same.code == 0 and "0 added, 0 removed, 0 changed" in same.out


def test_bad_arguments_are_refused(repo: Path, run_cli: RunCli) -> None:
    nothing = run_cli("--repo", repo, "lock", "diff", "no-such-thing")
    assert nothing.code == 2 and "neither a file nor a git revision" in nothing.err
    not_lock = run_cli("--repo", repo, "lock", "diff", repo / "pyproject.toml")
    assert not_lock.code == 2 and "not a uv.lock" in not_lock.err


def test_conflict_markers_point_at_resolve(repo: Path, run_cli: RunCli) -> None:
    markers = "<<<<<<< HEAD\n" + block("x", "1") + "=======\n>>>>>>> main\n"
    (repo / "uv.lock").write_text(BASE + markers)
    result = run_cli("--repo", repo, "lock", "diff", "base")
    assert result.code == 2
    assert "conflict markers" in result.err and "uvdock lock resolve" in result.err


def test_real_megatron_lock_against_derived(megatron_repo: Path, run_cli: RunCli) -> None:
    lock = megatron_repo / "uv.lock"
    text = lock.read_text()
    assert 'name = "absl-py"\nversion = "2.5.0"' in text
    lock.write_text(
        text.replace('name = "absl-py"\nversion = "2.5.0"', 'name = "absl-py"\nversion = "9.9.9"')
        + block("brand-new", "0.1")
    )
    result = run_cli("--repo", megatron_repo, "--json", "lock", "diff", "HEAD")
    assert result.code == 0, result.err
    assert json.loads(result.out) == {
        "command": "lock diff",
        "ok": True,
        "exit_code": 0,
        "dry_run": False,
        "added": [{"name": "brand-new", "versions": ["0.1"]}],
        "removed": [],
        "changed": [{"name": "absl-py", "from": ["2.5.0"], "to": ["9.9.9"]}],
    }


def test_text_names_a_downgrade(repo: Path, run_cli: RunCli) -> None:
    (repo / "uv.lock").write_text("version = 1\nrevision = 2\n" + block("alpha", "0.9"))
    result = run_cli("--repo", repo, "lock", "diff", "base")
    assert result.code == 0, result.err
    alpha = next(line for line in result.out.splitlines() if " alpha " in line)
    assert "downgrade" in alpha and "changed" not in alpha
    assert "1 changed" in result.out.splitlines()[0]  # the summary still counts it
