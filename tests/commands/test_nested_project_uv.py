"""uv commands run from inside a nested uv project act on that project, with real uv.

The checkout's root is one project; `infra/tool/` is another, with its own pyproject.toml,
uv.lock and wheel folder. From inside `infra/tool/`, `uvdock lock` and `uvdock add` (the
local engine: this process already is the CI container) change only that project's files.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, commit_all
from samples.wheels import project_pyproject


@pytest.fixture
def nested(uv_project: Callable[..., Path], run_cli: RunCli) -> Path:
    repo = uv_project(("alpha",))
    assert run_cli("--repo", repo, "--engine", "local", "lock").code == 0
    tool = repo / "infra" / "tool"
    tool.mkdir(parents=True)
    (tool / "pyproject.toml").write_text(project_pyproject(("beta",)).replace('"demo"', '"tool"'))
    shutil.copytree(repo / "wheels", tool / "wheels")
    assert run_cli("--repo", tool, "--engine", "local", "lock").code == 0
    commit_all(repo, "two projects")
    return repo


def test_lock_and_add_from_inside_act_on_the_nested_project(
    nested: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    root_files = [(nested / name).read_bytes() for name in ("pyproject.toml", "uv.lock")]
    tool = nested / "infra" / "tool"
    (tool / "src").mkdir()
    monkeypatch.chdir(tool / "src")
    added = run_cli("--engine", "local", "add", "gamma")
    assert added.code == 0, added.err
    assert "infra/tool/uv.lock" in added.out
    deps = tomllib.loads((tool / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [d.split(">")[0] for d in deps] == ["beta", "gamma"]
    assert 'name = "gamma"' in (tool / "uv.lock").read_text()
    assert [(nested / name).read_bytes() for name in ("pyproject.toml", "uv.lock")] == root_files
    check = run_cli("--engine", "local", "lock", "--check")
    assert check.code == 0, check.err
    # The check asks uv about this project's lock, not the root's (stale from here on).
    (nested / "pyproject.toml").write_text(project_pyproject(("alpha", "beta")))
    check = run_cli("--engine", "local", "lock", "--check")
    assert check.code == 0, check.err
    assert "infra/tool/uv.lock is up to date" in check.out
    dry = run_cli("--engine", "local", "--dry-run", "lock")
    assert "--directory infra/tool" in dry.out + dry.err


def test_lock_resolve_from_a_nested_project_looks_at_that_project_lock(
    nested: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Conflicts resolved there: test_lock_resolve_nested.py.
    monkeypatch.chdir(nested / "infra" / "tool")
    result = run_cli("--engine", "local", "lock", "resolve")
    assert result.code == 0, result.err
    assert "infra/tool/uv.lock has no conflict" in result.out


def test_megatron_from_a_subfolder_plans_the_same_uv_commands(
    megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ("--json", "--dry-run", "--engine", "local", "add", "einops")
    from_root = run_cli("--repo", megatron_repo, *argv)
    monkeypatch.chdir(megatron_repo / "docker")
    from_docker = run_cli(*argv)
    assert from_root.code == from_docker.code == 0, from_docker.err
    planned = [step["argv"] for step in json.loads(from_docker.out)["planned"]]
    assert planned == [step["argv"] for step in json.loads(from_root.out)["planned"]]
    assert planned[0][:4] == ["uv", "add", "--no-sync", "einops"]


def test_doctor_from_inside_checks_the_nested_project_lock(
    nested: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The root's lock goes stale; the nested project's stays current: doctor asks about the
    # project that `uvdock lock` from here would act on.
    (nested / "pyproject.toml").write_text(project_pyproject(("alpha", "beta")))

    def lock_check() -> dict[str, str]:
        result = run_cli("--json", "--engine", "local", "doctor")
        checks: list[dict[str, str]] = json.loads(result.out)["checks"]
        return next(check for check in checks if check["name"] == "uv.lock current")

    monkeypatch.chdir(nested)
    assert lock_check()["status"] == "fail", "the root's lock is stale"
    monkeypatch.chdir(nested / "infra" / "tool")
    check = lock_check()
    assert check["status"] == "pass", check
    assert check["detail"] == "infra/tool/uv.lock matches infra/tool/pyproject.toml"
