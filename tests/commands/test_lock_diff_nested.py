"""`lock diff` in a checkout with a nested uv project (its own pyproject.toml and uv.lock).

Run from inside `infra/tool/`, uvdock acts on that project's lock and names it; `REV:PATH`
names any lock at any revision; a lock that one revision lacks is all added or all removed.
A workspace member (no lock of its own in uv's eyes) stays with its workspace's lock.
"""

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


def lock(*packages: tuple[str, str]) -> str:
    return "version = 1\nrevision = 2\n" + "".join(block(n, v) for n, v in packages)


ROOT_LOCK = lock(("alpha", "1.0"))
TOOL_BASE = lock(("click", "8.1"), ("rich", "13.0"))
TOOL_HEAD = lock(("click", "8.2"), ("typer", "0.12"))


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    repo = make_repo({"pyproject.toml": '[project]\nname = "root"\n', "uv.lock": ROOT_LOCK})
    git(repo, "branch", "before")  # no infra/tool yet
    tool = repo / "infra" / "tool"
    (tool / "src").mkdir(parents=True)
    (tool / "pyproject.toml").write_text('[project]\nname = "tool"\n')
    (tool / "uv.lock").write_text(TOOL_BASE)
    commit_all(repo, "add infra/tool")
    git(repo, "branch", "base")
    (tool / "uv.lock").write_text(TOOL_HEAD)
    return repo


def names(payload: dict[str, list[dict[str, str]]], key: str) -> list[str]:
    return [entry["name"] for entry in payload[key]]


@pytest.mark.parametrize("where", ["infra/tool", "infra/tool/src"])
def test_from_inside_a_nested_project_its_lock_is_diffed_and_named(
    repo: Path, where: str, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / where)
    text = run_cli("lock", "diff", "base")
    assert text.code == 0, text.err
    assert "infra/tool/uv.lock: base -> working tree: 1 added, 1 removed, 1 changed" in text.out
    as_json = run_cli("--json", "lock", "diff", "base")
    payload = json.loads(as_json.out)
    assert payload["lock"] == "infra/tool/uv.lock"
    assert (names(payload, "added"), names(payload, "removed")) == (["typer"], ["rich"])
    assert names(payload, "changed") == ["click"]


def test_rev_colon_path_names_a_lock_at_a_revision(
    repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_all(repo, "head")
    by_path = run_cli("--repo", repo, "--json", "lock", "diff", "base:infra/tool/uv.lock",
                      "HEAD:infra/tool")  # fmt: skip
    assert by_path.code == 0, by_path.err
    payload = json.loads(by_path.out)
    assert names(payload, "added") == ["typer"] and names(payload, "changed") == ["click"]
    monkeypatch.chdir(repo / "infra")
    relative = run_cli("--json", "lock", "diff", "base:./tool/uv.lock", "HEAD:./tool/uv.lock")
    assert relative.code == 0, relative.err
    assert json.loads(relative.out)["added"] == payload["added"]
    missing = run_cli("lock", "diff", "base:nowhere/uv.lock", "HEAD:nowhere/uv.lock")
    assert missing.code == 2 and "nowhere/uv.lock" in missing.err


def test_a_lock_that_appears_or_disappears_is_all_added_or_all_removed(
    repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "infra" / "tool")
    appears = run_cli("--json", "lock", "diff", "before", "base")
    assert appears.code == 0, appears.err
    payload = json.loads(appears.out)
    assert names(payload, "added") == ["click", "rich"]
    assert payload["removed"] == payload["changed"] == []
    disappears = run_cli("lock", "diff", "base", "before")
    assert disappears.code == 0, disappears.err
    assert "0 added, 2 removed, 0 changed" in disappears.out
    assert "before has no infra/tool/uv.lock" in disappears.out + disappears.err


def test_a_workspace_member_uses_its_workspace_lock(
    make_repo: Callable[..., Path], run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = '[project]\nname = "root"\n\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'
    repo = make_repo(
        {
            "pyproject.toml": root,
            "uv.lock": ROOT_LOCK,
            "packages/a/pyproject.toml": '[project]\nname = "a"\n',
            "packages/a/uv.lock": TOOL_BASE,  # stale: uv ignores a member's own lock
        }
    )
    (repo / "uv.lock").write_text(lock(("alpha", "1.1")))
    monkeypatch.chdir(repo / "packages" / "a")
    result = run_cli("--json", "lock", "diff", "HEAD")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["lock"] == "uv.lock" and names(payload, "changed") == ["alpha"]


def test_megatron_from_a_subfolder_diffs_the_root_lock_as_before(
    megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(megatron_repo / "docker")
    result = run_cli("lock", "diff", "HEAD")
    assert result.code == 0, result.err
    assert result.out.startswith("HEAD -> working tree: 0 added, 0 removed, 0 changed")
    payload = json.loads(run_cli("--json", "lock", "diff", "HEAD").out)
    assert payload["lock"] == "uv.lock"
