"""pyproject.toml shapes from the family's real merges, merged by git through the driver.

Each test is a real `git merge` (or rebase) with `merge-driver install --pyproject`; the
merged file is read back with tomllib (what uv reads) and compared with what both sides
meant.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from conftest import RunCli, commit_all, git

PROJECT = '[project]\nname = "demo"\nversion = "0.1.0"\n\n'
UV_KEYS = 'no-build-isolation-package = ["flash-attn"]\ndefault-groups = ["dev"]\n'
UV_BASE = f"{PROJECT}[tool.uv]\n{UV_KEYS}"
# One side puts the new sub-table above the [tool.uv] keys (valid TOML: a super-table may
# be defined after its sub-table).
UV_WORKSPACE = f'{PROJECT}[tool.uv.workspace]\nmembers = ["infra/*"]\n\n[tool.uv]\n{UV_KEYS}'
UV_LINK_MODE = UV_BASE + 'link-mode = "copy"\n'

ST_BASE = f'{PROJECT}[tool.setuptools]\npackage-dir = {{"" = "src"}}\n'
ST_DYNAMIC = (
    f'{PROJECT}[tool.setuptools.dynamic]\nversion = {{attr = "demo.__version__"}}\n\n'
    '[tool.setuptools]\npackage-dir = {"" = "src"}\n'
)
ST_ZIP = ST_BASE + "zip-safe = false\n"


def merged_by_git(
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    base: str,
    main: str,
    feature: str,
    operation: str = "merge",
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    repo = make_repo({"pyproject.toml": base, "README": "x\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "pyproject.toml").write_text(feature)
    commit_all(repo, "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "pyproject.toml").write_text(main)
    commit_all(repo, "main")
    installed = run_cli("--repo", repo, "merge-driver", "install", "--pyproject")
    assert installed.code == 0, installed.err
    git(repo, "checkout", "-q", "feature")
    argv = ["merge", "--no-edit", "main"] if operation == "merge" else ["rebase", "main"]
    done = subprocess.run(
        ["git", "-C", str(repo), *argv], capture_output=True, text=True, check=False
    )
    return repo, done


def read(repo: Path) -> dict[str, Any]:
    return tomllib.loads((repo / "pyproject.toml").read_text())


@pytest.mark.parametrize("operation", ["merge", "rebase"])
@pytest.mark.parametrize("workspace_on", ["main", "feature"])
def test_a_sub_table_added_above_tool_uv_keeps_the_other_sides_keys_in_tool_uv(
    make_repo: Callable[..., Path], run_cli: RunCli, operation: str, workspace_on: str
) -> None:
    main, feature = (
        (UV_WORKSPACE, UV_LINK_MODE) if workspace_on == "main" else (UV_LINK_MODE, UV_WORKSPACE)
    )
    repo, done = merged_by_git(make_repo, run_cli, UV_BASE, main, feature, operation)
    assert done.returncode == 0, done.stdout + done.stderr
    uv = read(repo)["tool"]["uv"]
    assert uv == {
        "workspace": {"members": ["infra/*"]},
        "no-build-isolation-package": ["flash-attn"],
        "default-groups": ["dev"],
        "link-mode": "copy",
    }


def test_setuptools_dynamic_added_above_keeps_package_dir_in_setuptools(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo, done = merged_by_git(make_repo, run_cli, ST_BASE, ST_DYNAMIC, ST_ZIP)
    assert done.returncode == 0, done.stdout + done.stderr
    assert read(repo)["tool"]["setuptools"] == {
        "dynamic": {"version": {"attr": "demo.__version__"}},
        "package-dir": {"": "src"},
        "zip-safe": False,
    }


def driver_files(tmp_path: Path, base: str, ours: str, theirs: str) -> list[Path]:
    files = []
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    return files


def render_wrongly(monkeypatch: pytest.MonkeyPatch) -> None:
    """tomlkit renders a text that parses but means something else (the shape of the
    sub-table bug): the driver must notice, whatever the renderer does."""
    real = tomlkit.dumps

    def dumps(document: Any) -> str:
        return real(document).replace("[tool.uv]\n", "[tool.uv]\n[tool.uv.moved]\n", 1)

    monkeypatch.setattr(tomlkit, "dumps", dumps)


def test_a_rendering_that_means_otherwise_gives_way_to_gits_clean_merge(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    render_wrongly(monkeypatch)
    files = driver_files(tmp_path, UV_BASE, UV_WORKSPACE, UV_LINK_MODE)
    result = run_cli("--json", "merge-driver", "pyproject", *files)
    assert result.code == 0, result.err
    assert json.loads(result.out)["pyproject"]["via"] == "git"
    assert files[1].read_text() == UV_WORKSPACE + 'link-mode = "copy"\n'


def test_with_no_text_meaning_the_decision_the_driver_leaves_a_conflict(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both sides add beta, at different places: git's clean merge has it twice, the
    # structured merge decided once; the structured text is rendered wrongly.
    render_wrongly(monkeypatch)
    base = UV_BASE.replace("[tool.uv]", 'dependencies = [\n    "alpha",\n]\n\n[tool.uv]')
    ours = base.replace('    "alpha",\n', '    "beta",\n    "alpha",\n')
    theirs = base.replace('    "alpha",\n', '    "alpha",\n    "beta",\n')
    files = driver_files(tmp_path, base, ours, theirs)
    result = run_cli("merge-driver", "pyproject", *files)
    assert result.code == 1, result.err
    assert "would not mean what the merge decided (at tool.uv" in result.err
    assert files[1].read_text() == (
        f"<<<<<<< ours\n{ours}||||||| base\n{base}=======\n{theirs}>>>>>>> theirs\n"
    )
