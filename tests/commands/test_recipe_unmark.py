"""`uvdock recipe unmark`: mark -> unmark gives back the original bytes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import RunCli, git
from samples.recipes import MODEL, OTHER, RECIPES, crlf


def _mark(run_cli: RunCli, repo: Path, case: str, *extra: str) -> None:
    result = run_cli(
        "--repo", repo, "recipe", "mark-broken", case, "--issue", "77", "--reason", "oom", *extra
    )
    assert result.code == 0, result.err


def test_round_trip_every_shared_case(megatron_repo: Path, run_cli: RunCli) -> None:
    _mark(run_cli, megatron_repo, "gpt_16b_perf")
    _mark(run_cli, megatron_repo, "gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_validation")
    assert (
        git(megatron_repo, "status", "--porcelain").count(" M ") == 1
    )  # the other one was broken already
    for case in (
        "gpt_16b_perf",
        "gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_validation",
        "ckpt_converter",
    ):
        result = run_cli("--repo", megatron_repo, "recipe", "unmark", case)
        assert result.code == 0, result.err
    assert git(megatron_repo, "status", "--porcelain") == ""


def test_round_trip_splits_crlf_and_two_files(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": crlf(MODEL), f"{RECIPES}/sub/b.yaml": OTHER})
    _mark(run_cli, repo, "alpha", "--platform", "dgx_h100")
    _mark(run_cli, repo, "delta", "--environment", "lts")
    _mark(run_cli, repo, "zeta", "--platform", "dgx_a100")
    assert len(git(repo, "status", "--porcelain").splitlines()) == 2
    for case in ("zeta", "delta", "alpha"):
        result = run_cli("--repo", repo, "recipe", "unmark", case)
        assert result.code == 0, result.err
        assert "joined" in result.out
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / RECIPES / "a.yaml").read_bytes() == crlf(MODEL).encode()


def test_dry_run_and_json(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": MODEL})
    _mark(run_cli, repo, "gamma")
    marked = (repo / RECIPES / "a.yaml").read_bytes()
    result = run_cli("--repo", repo, "--dry-run", "--json", "recipe", "unmark", "gamma")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["dry_run"] is True
    assert payload["files"] == [f"{RECIPES}/a.yaml"]
    assert (
        "-  - test_case: [gamma]  # uvdock-split: - test_case: [beta, gamma, delta]" in result.err
    )
    assert (repo / RECIPES / "a.yaml").read_bytes() == marked


def test_nothing_to_unmark_exits_0(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": MODEL})
    result = run_cli("--repo", repo, "recipe", "unmark", "epsilon")
    assert result.code == 0
    assert "epsilon has no mark made by uvdock" in result.out
    assert "was not marked by uvdock; left as is" in result.out
    assert git(repo, "status", "--porcelain") == ""


def test_out_of_order_unmark_is_refused(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": MODEL})
    _mark(run_cli, repo, "beta")
    _mark(run_cli, repo, "gamma")
    marked = (repo / RECIPES / "a.yaml").read_bytes()
    result = run_cli("--repo", repo, "recipe", "unmark", "beta")
    assert result.code == 2
    assert "split out of this entry later" in result.err
    assert (repo / RECIPES / "a.yaml").read_bytes() == marked


def test_unknown_case_exits_2(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({f"{RECIPES}/a.yaml": MODEL})
    result = run_cli("--repo", repo, "recipe", "unmark", "omega")
    assert result.code == 2
    assert "unknown test case" in result.err
