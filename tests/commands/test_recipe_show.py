"""`uvdock recipe show CASE`: table and JSON of every place a case runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli
from samples.recipes import MODEL, OTHER, RECIPES


def test_show_json_lists_rows_of_both_files(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({f"{RECIPES}/a/model.yaml": MODEL, f"{RECIPES}/b/other.yaml": OTHER})
    result = run_cli("--repo", repo, "--json", "recipe", "show", "alpha")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["case"] == "alpha"
    assert [
        (r["path"], r["line"], r["platforms"], r["platforms_inherited"]) for r in payload["runs"]
    ] == [
        (f"{RECIPES}/a/model.yaml", 20, ["dgx_a100", "dgx_h100"], False),
        (f"{RECIPES}/a/model.yaml", 23, ["dgx_a100"], True),
        (f"{RECIPES}/b/other.yaml", 8, ["dgx_a100", "dgx_h100"], True),
    ]
    assert payload["runs"][1]["environment"] == ["lts"]
    assert payload["runs"][1]["scope"] == ["nightly"]


def test_show_table_names_path_line_and_marks_inherited(
    make_repo: Callable[..., Path], run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    repo = make_repo({f"{RECIPES}/model.yaml": MODEL})
    result = run_cli("--repo", repo, "recipe", "show", "epsilon")
    assert result.code == 0, result.err
    (row,) = [line for line in result.out.splitlines() if "model.yaml" in line]
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells == [f"{RECIPES}/model.yaml:39", "dev", "weekly, mr-broken", "dgx_a100 (spec)"]


def test_show_issue_of_a_uvdock_mark(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({f"{RECIPES}/model.yaml": MODEL})
    assert (
        run_cli(
            "--repo",
            repo,
            "recipe",
            "mark-broken",
            "alpha",
            "--issue",
            "9",
            "--reason",
            "oom",
            "--lts",
        ).code
        == 0
    )
    payload = json.loads(run_cli("--repo", repo, "--json", "recipe", "show", "alpha").out)
    assert [r["issue"] for r in payload["runs"]] == [9, 9]


def test_show_unknown_case_exits_2_with_closest(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({f"{RECIPES}/model.yaml": MODEL})
    result = run_cli("--repo", repo, "recipe", "show", "alpah")
    assert result.code == 2
    assert "unknown test case `alpah`" in result.err
    assert "closest: alpha" in result.err
    assert result.out == ""


def test_show_on_the_shared_recipes(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "--json", "recipe", "show", "gpt_16b_perf")
    assert result.code == 0, result.err
    (row,) = json.loads(result.out)["runs"]
    assert row == {
        "path": "tests/test_utils/recipes/gb200/gpt-perf.yaml",
        "line": 54,
        "environment": ["dev"],
        "scope": ["mr"],
        "platforms": ["dgx_gb200"],
        "platforms_inherited": False,
        "issue": None,
    }
