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


def pypi(version: str) -> dict[str, str]:
    return {"version": version, "source": "registry+https://pypi.org/simple"}


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
        "lock": "uv.lock",
        "added": [{"name": "gamma", "versions": ["0.3"], "entries": [pypi("0.3")]}],
        "removed": [{"name": "beta", "versions": ["2.0"], "entries": [pypi("2.0")]}],
        "changed": [
            {
                "name": "alpha",
                "from": ["1.0"],
                "to": ["1.1"],
                "from_entries": [pypi("1.0")],
                "to_entries": [pypi("1.1")],
            }
        ],
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
    assert json.loads(by_rev.out) == {**json.loads(by_path.out), "lock": "uv.lock"}
    assert json.loads(by_path.out)["lock"] is None  # two files, not one lock at two times
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
    index = "https://index.example.invalid/simple"
    assert json.loads(result.out) == {
        "command": "lock diff",
        "ok": True,
        "exit_code": 0,
        "dry_run": False,
        "lock": "uv.lock",
        "added": [{"name": "brand-new", "versions": ["0.1"], "entries": [pypi("0.1")]}],
        "removed": [],
        "changed": [
            {
                "name": "absl-py",
                "from": ["2.5.0"],
                "to": ["9.9.9"],
                "from_entries": [{"version": "2.5.0", "source": f"registry+{index}"}],
                "to_entries": [{"version": "9.9.9", "source": f"registry+{index}"}],
            }
        ],
    }


GIT_URL = "https://github.com/example/tool.git?rev=main#d7ea8af0123456789abcdef0123456789abcdef0"


def test_json_keeps_version_and_source_apart(repo: Path, run_cli: RunCli) -> None:
    git_block = (
        f'\n[[package]]\nname = "tool"\nversion = "1.1.1"\nsource = {{ git = "{GIT_URL}" }}\n'
    )
    local = '\n[[package]]\nname = "local-pkg"\nsource = { directory = "libs/local" }\n'
    (repo / "uv.lock").write_text(HEAD + git_block + local)
    result = run_cli("--repo", repo, "--json", "lock", "diff", "base")
    assert result.code == 0, result.err
    added = {a["name"]: a for a in json.loads(result.out)["added"]}
    assert added["tool"] == {
        "name": "tool",
        "versions": ["1.1.1"],
        "entries": [{"version": "1.1.1", "source": f"git+{GIT_URL}"}],
    }
    assert added["local-pkg"] == {
        "name": "local-pkg",
        "versions": [],
        "entries": [{"version": None, "source": "directory+libs/local"}],
    }
    assert added["gamma"]["entries"] == [
        {"version": "0.3", "source": "registry+https://pypi.org/simple"}
    ]
    text = run_cli("--repo", repo, "lock", "diff", "base")
    assert "1.1.1 (git https://github.com/example/tool.git@d7ea8af01234)" in text.out
    assert "(dynamic) (directory libs/local)" in text.out
    markdown = run_cli("--repo", repo, "lock", "diff", "base", "--format", "markdown")
    assert "github.com/example/tool.git" in markdown.out


def test_json_names_a_source_only_change_in_entries(repo: Path, run_cli: RunCli) -> None:
    moved = HEAD.replace("https://pypi.org/simple", "https://mirror.example/simple", 1)
    (repo / "uv.lock").write_text(moved)
    git(repo, "commit", "-qam", "head")
    (repo / "uv.lock").write_text(HEAD)
    result = run_cli("--repo", repo, "--json", "lock", "diff", "HEAD")
    changed = json.loads(result.out)["changed"]
    assert changed == [
        {
            "name": "alpha",
            "from": ["1.1"],
            "to": ["1.1"],
            "from_entries": [
                {"version": "1.1", "source": "registry+https://mirror.example/simple"}
            ],
            "to_entries": [{"version": "1.1", "source": "registry+https://pypi.org/simple"}],
        }
    ]


def test_two_files_need_no_repository(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not a git work tree
    (tmp_path / "a.lock").write_text(BASE)
    (tmp_path / "b.lock").write_text(HEAD)
    result = run_cli("--json", "lock", "diff", tmp_path / "a.lock", tmp_path / "b.lock")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["lock"] is None and [a["name"] for a in payload["added"]] == ["gamma"]


def test_text_names_a_downgrade(repo: Path, run_cli: RunCli) -> None:
    (repo / "uv.lock").write_text("version = 1\nrevision = 2\n" + block("alpha", "0.9"))
    result = run_cli("--repo", repo, "lock", "diff", "base")
    assert result.code == 0, result.err
    alpha = next(line for line in result.out.splitlines() if " alpha " in line)
    assert "downgrade" in alpha and "changed" not in alpha
    assert "1 changed" in result.out.splitlines()[0]  # the summary still counts it
