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

from uvdock.merge.pyproject import merge_pyproject

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


META_BASE = (
    f"{UV_BASE}\n"
    '[[tool.uv.dependency-metadata]]\nname = "flash-attn"\nversion = "2.6.3"\n'
    'requires-dist = ["torch", "einops"]\n\n'
    '[[tool.uv.dependency-metadata]]\nname = "mamba-ssm"\nversion = "2.2.2"\n'
    'requires-dist = ["torch"]\n'
)


def test_dependency_metadata_merges_entry_by_entry(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    # Adjacent lines (no blank line between the entries): git alone stops on a conflict.
    base = META_BASE.replace('"einops"]\n\n[[', '"einops"]\n[[')
    main = base.replace('"torch", "einops"]', '"torch", "einops", "ninja"]')
    new_entry = '[[tool.uv.dependency-metadata]]\nname = "causal-conv1d"\nversion = "1.5.0"\n'
    feature = base.replace('"einops"]\n[[', f'"einops"]\n{new_entry}[[').replace(
        'version = "2.2.2"', 'version = "2.2.4"'
    )
    repo, done = merged_by_git(make_repo, run_cli, base, main, feature)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "uvdock: merged pyproject.toml" in said and "fell back" not in said, said
    entries = read(repo)["tool"]["uv"]["dependency-metadata"]
    assert {e["name"]: (e["version"], e.get("requires-dist")) for e in entries} == {
        "flash-attn": ("2.6.3", ["torch", "einops", "ninja"]),
        "causal-conv1d": ("1.5.0", None),
        "mamba-ssm": ("2.2.4", ["torch"]),
    }


@pytest.mark.parametrize("ours_is", ["main", "feature"])
def test_dependency_metadata_entries_merge_in_the_structured_merge(ours_is: str) -> None:
    base = META_BASE.replace('"einops"]\n\n[[', '"einops"]\n[[')
    main = base.replace('"torch", "einops"]', '"torch", "einops", "ninja"]')
    new_entry = '[[tool.uv.dependency-metadata]]\nname = "causal-conv1d"\nversion = "1.5.0"\n'
    feature = base.replace('"einops"]\n[[', f'"einops"]\n{new_entry}[[')
    feature = feature.replace('version = "2.2.2"', 'version = "2.2.4"')
    ours, theirs = (main, feature) if ours_is == "main" else (feature, main)
    result = merge_pyproject(base, ours, theirs)  # no git text: tomlkit's own
    assert result.text is not None, result.conflicts
    entries = tomllib.loads(result.text)["tool"]["uv"]["dependency-metadata"]
    assert [(e["name"], e["version"]) for e in entries] == [
        ("flash-attn", "2.6.3"),
        ("causal-conv1d", "1.5.0"),
        ("mamba-ssm", "2.2.4"),
    ]
    assert entries[0]["requires-dist"] == ["torch", "einops", "ninja"]


def test_one_entry_changed_on_both_sides_names_that_entry_not_the_array(
    tmp_path: Path, run_cli: RunCli
) -> None:
    ours = META_BASE.replace('version = "2.6.3"', 'version = "2.7.4"')
    theirs = META_BASE.replace('version = "2.6.3"', 'version = "2.8.0"')
    files = driver_files(tmp_path, META_BASE, ours, theirs)
    result = run_cli("merge-driver", "pyproject", *files)
    assert result.code == 1
    assert "tool.uv.dependency-metadata[flash-attn]" in result.err
    assert "mamba-ssm" not in result.err  # the entry nobody changed is not printed
    assert len(result.err) < 600, result.err


def test_a_conflict_on_a_long_array_names_the_key_not_both_arrays(
    tmp_path: Path, run_cli: RunCli
) -> None:
    values = [f"value-{i:03d}" for i in range(60)]
    base = f"{UV_BASE}\n[tool.other]\nlist = {json.dumps(values)}\n"
    ours = base.replace('"value-000"', '"ours-000"')
    theirs = base.replace('"value-059"', '"theirs-059"')
    files = driver_files(tmp_path, base, ours, theirs)
    result = run_cli("merge-driver", "pyproject", *files)
    assert "tool.other.list" in result.err
    assert "value-030" not in result.err and len(result.err) < 600, result.err


OVERRIDES = (
    f"{PROJECT}[tool.uv]\noverride-dependencies = [\n"
    '    "protobuf<6",  # transformer-engine breaks on protobuf 6\n'
    '    "protobuf>=4.25.8",  # CVE-2025-4565: keep above 4.25.8\n'
    '    "urllib3>=2.5",\n'
    "]\n"
)
NO_TE_PIN = OVERRIDES.replace('    "protobuf<6",  # transformer-engine breaks on protobuf 6\n', "")


@pytest.mark.parametrize("operation", ["merge", "rebase"])
def test_duplicate_name_overrides_keep_their_own_comments(
    make_repo: Callable[..., Path], run_cli: RunCli, operation: str
) -> None:
    # git merges these lines itself; the structured merge it is checked against must agree.
    main = NO_TE_PIN
    feature = OVERRIDES.replace('"urllib3>=2.5",\n', '"urllib3>=2.6",\n    "idna>=3.7",\n')
    repo, done = merged_by_git(make_repo, run_cli, OVERRIDES, main, feature, operation)
    assert done.returncode == 0, done.stdout + done.stderr
    text = (repo / "pyproject.toml").read_text()
    assert '    "protobuf>=4.25.8",  # CVE-2025-4565: keep above 4.25.8\n' in text
    assert "transformer-engine breaks" not in text
    assert read(repo)["tool"]["uv"]["override-dependencies"] == [
        "protobuf>=4.25.8",
        "urllib3>=2.6",
        "idna>=3.7",
    ]


@pytest.mark.parametrize("sides", ["theirs removes", "ours removes"])
def test_duplicate_name_overrides_keep_their_comments_in_the_structured_merge(
    sides: str,
) -> None:
    other = OVERRIDES.replace('"urllib3>=2.5"', '"urllib3>=2.6"')
    ours, theirs = (other, NO_TE_PIN) if sides == "theirs removes" else (NO_TE_PIN, other)
    result = merge_pyproject(OVERRIDES, ours, theirs)  # no git text: tomlkit's own
    assert result.text is not None
    assert '    "protobuf>=4.25.8",  # CVE-2025-4565: keep above 4.25.8\n' in result.text
    assert "transformer-engine breaks" not in result.text
    assert [t.written for t in result.taken if t.change == "removed"] == ["protobuf<6"]


def test_a_package_pinned_differently_in_two_lists_is_reported(
    tmp_path: Path, run_cli: RunCli
) -> None:
    base = (
        '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["torch==2.5.1"]\n\n'
        '[tool.uv]\noverride-dependencies = ["torch==2.5.1"]\n'
    )
    ours = base.replace("2.5.1", "2.6.0")  # both lists, consistently
    # theirs adds a group that pins the version both lists had.
    theirs = base + '\n[dependency-groups]\ntest = ["torch==2.5.1", "pytest"]\n'
    files = driver_files(tmp_path, base, ours, theirs)
    result = run_cli("merge-driver", "pyproject", *files)
    assert result.code == 0, result.err
    said = result.out + result.err
    assert (
        "check: torch pinned differently: project.dependencies (torch==2.6.0), "
        "dependency-groups.test (torch==2.5.1), tool.uv.override-dependencies (torch==2.6.0)"
    ) in said
    files[1].write_text(ours)
    as_json = json.loads(run_cli("--json", "merge-driver", "pyproject", *files).out)
    assert as_json["pyproject"]["pins"] == [
        {
            "package": "torch",
            "pins": {
                "project.dependencies": "torch==2.6.0",
                "dependency-groups.test": "torch==2.5.1",
                "tool.uv.override-dependencies": "torch==2.6.0",
            },
        }
    ]
    # A clash one side already had is that side's own choice, not the merge's.
    files[1].write_text(ours.replace('override-dependencies = ["torch==2.6.0"]',
                                     'override-dependencies = ["torch==2.5.1"]'))  # fmt: skip
    again = json.loads(run_cli("--json", "merge-driver", "pyproject", *files).out)
    assert [p["package"] for p in again["pyproject"]["pins"]] == []
