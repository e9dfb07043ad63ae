"""`uvdock recipe unmark`: mark -> unmark gives back the original bytes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import RunCli, git
from samples.recipes import MODEL, OTHER, RECIPES, crlf


def _mark(run_cli: RunCli, repo: Path, case: str, *extra: str) -> None:
    result = run_cli(
        "--repo",
        repo,
        "recipe",
        "mark-broken",
        case,
        "--issue",
        "77",
        "--reason",
        "oom",
        "--lts",
        *extra,
    )
    assert result.code == 0, result.err


def test_round_trip_every_shared_case(megatron_repo: Path, run_cli: RunCli) -> None:
    _mark(run_cli, megatron_repo, "gpt_16b_perf")
    _mark(run_cli, megatron_repo, "gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_validation")
    assert (
        git(megatron_repo, "status", "--porcelain").count(" M ") == 1
    )  # the other one was broken already
    for case in ("gpt_16b_perf", "gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_validation"):
        result = run_cli("--repo", megatron_repo, "recipe", "unmark", case, "--lts")
        assert result.code == 0, result.err
    # The real recipe's own hand-made marks go too: the case runs in every scope again.
    assert git(megatron_repo, "status", "--porcelain") == (
        " M tests/test_utils/recipes/h100/gpt-dynamic-inference-cuda-graphs.yaml\n"
    )
    diff = git(megatron_repo, "diff", "-U0")
    assert "-        scope: [mr-broken, mr-github-broken]" in diff
    assert "+        scope: [mr, mr-github]" in diff
    assert diff.count("\n+ ") + diff.count("\n- ") == 2


def test_round_trip_splits_crlf_and_two_files(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": crlf(MODEL), f"{RECIPES}/sub/b.yaml": OTHER})
    _mark(run_cli, repo, "alpha", "--platform", "dgx_h100")
    _mark(run_cli, repo, "delta", "--environment", "lts")
    _mark(run_cli, repo, "zeta", "--platform", "dgx_a100")
    assert len(git(repo, "status", "--porcelain").splitlines()) == 2
    for case in ("zeta", "delta", "alpha"):
        result = run_cli("--repo", repo, "recipe", "unmark", case, "--lts")
        assert result.code == 0, result.err
        assert "joined" in result.out
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / RECIPES / "a.yaml").read_bytes() == crlf(MODEL).encode()


def test_dry_run_and_json(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": MODEL})
    _mark(run_cli, repo, "gamma")
    marked = (repo / RECIPES / "a.yaml").read_bytes()
    result = run_cli("--repo", repo, "--dry-run", "--json", "recipe", "unmark", "gamma", "--lts")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["dry_run"] is True
    assert payload["files"] == [f"{RECIPES}/a.yaml"]
    assert (
        "-  - test_case: [gamma]  # uvdock-split: - test_case: [beta, gamma, delta]" in result.err
    )
    assert (repo / RECIPES / "a.yaml").read_bytes() == marked


def test_nothing_to_unmark_exits_1(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": MODEL})
    result = run_cli("--repo", repo, "recipe", "unmark", "alpha", "--lts")
    assert result.code == 1
    assert "alpha has no broken mark to undo; nothing changed" in result.out
    assert git(repo, "status", "--porcelain") == ""
    result = run_cli("--repo", repo, "--json", "recipe", "unmark", "alpha", "--lts")
    assert result.code == 1
    assert json.loads(result.out)["changes"] == []


def test_hand_made_mark_on_the_real_recipe(megatron_repo: Path, run_cli: RunCli) -> None:
    path = megatron_repo / "tests/test_utils/recipes/h100/ckpt_converter.yaml"
    text = path.read_text()
    hand = text.replace(
        "        scope: [nightly-broken]",
        "        # Broken: flaky conversion \u2014 see issue #4471.\n        scope: [nightly-broken]",
    )
    path.write_text(hand)
    shown = run_cli("--repo", megatron_repo, "--json", "recipe", "show", "ckpt_converter")
    issues = [run["issue"] for run in json.loads(shown.out)["runs"]]
    assert 4471 in issues
    result = run_cli("--repo", megatron_repo, "recipe", "unmark", "ckpt_converter", "--lts")
    assert result.code == 0, result.err
    after = path.read_text()
    assert "Broken" not in after and "-broken" not in after
    assert after == text.replace("-broken", "")


def test_out_of_order_unmark_is_refused(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": MODEL})
    _mark(run_cli, repo, "beta")
    _mark(run_cli, repo, "gamma")
    marked = (repo / RECIPES / "a.yaml").read_bytes()
    result = run_cli("--repo", repo, "recipe", "unmark", "beta", "--lts")
    assert result.code == 2
    assert "split out of this entry later" in result.err
    assert (repo / RECIPES / "a.yaml").read_bytes() == marked


def test_unknown_case_exits_2(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": MODEL})
    result = run_cli("--repo", repo, "recipe", "unmark", "omega", "--lts")
    assert result.code == 2
    assert "unknown test case" in result.err
