"""`uvdock lts pin SPEC... --lts [--add]`."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, git

REQ = "docker/lts/requirements.txt"


def test_without_lts_it_is_refused_with_the_same_command(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    before = (megatron_repo / REQ).read_bytes()
    result = run_cli("--repo", megatron_repo, "lts", "pin", "tqdm==4.70.0", "--add")
    assert result.code == 2
    assert "older long-term-support base" in result.err
    assert (
        f"re-run with --lts: uvdock --repo {megatron_repo} lts pin tqdm==4.70.0 --add --lts"
        in result.err
    )
    assert (megatron_repo / REQ).read_bytes() == before


def test_pin_real_file_writes_diff_and_next_steps(megatron_repo: Path, run_cli: RunCli) -> None:
    before = (megatron_repo / REQ).read_bytes()
    result = run_cli(
        "--repo", megatron_repo, "lts", "pin", "einops==0.8.10", "DATASETS==5.0.1", "--lts"
    )
    assert result.code == 0, result.err
    after = (megatron_repo / REQ).read_bytes()
    assert after == before.replace(
        b"einops==0.8.2                          #", b"einops==0.8.10                         #"
    ).replace(b"datasets==4.8.5\n", b"datasets==5.0.1\n")
    assert "-einops==0.8.2" in result.out and "+datasets==5.0.1" in result.out
    assert "docker build" not in result.out  # no engine named but the one that runs
    assert "container::lts" in result.out


def test_the_rebuild_step_is_offered_only_where_it_works(
    megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Megatron-LM's LTS Dockerfile uses heredocs: podman 4.3 (buildah < 1.35) refuses it.
    from uvdock.image import heredoc
    from uvdock.run import build_check

    if shutil.which("podman") is None:
        pytest.skip("podman is not installed")
    verdict = heredoc.verdict(build_check.builder("podman", dict(os.environ)), "D", 1)
    refused = verdict is not None and verdict.refuse
    monkeypatch.setenv("UVDOCK_ENGINE", "podman")
    result = run_cli("--repo", megatron_repo, "lts", "pin", "einops==0.8.10", "--lts")
    assert result.code == 0, result.err
    assert ("uvdock image build --lts" in result.out) is not refused
    if refused:
        assert "the LTS image cannot be built here" in result.out and "heredocs" in result.out
        build = run_cli("--repo", megatron_repo, "--engine", "podman", "image", "build", "--lts")
        assert build.code == 3  # what the step no longer offers is refused indeed
    assert git(megatron_repo, "diff", "--stat").count("|") == 1


def test_dry_run_shows_the_diff_and_writes_nothing(megatron_repo: Path, run_cli: RunCli) -> None:
    before = (megatron_repo / REQ).read_bytes()
    result = run_cli("--repo", megatron_repo, "--dry-run", "lts", "pin", "tqdm==4.70.0", "--lts")
    assert result.code == 0
    assert "+tqdm==4.70.0" in result.out and "not written" in result.out
    assert (megatron_repo / REQ).read_bytes() == before


@pytest.mark.parametrize(
    "spec",
    [
        "tqdm>=4",
        "tqdm==",
        "tqdm==nope!",
        "tqdm==1; echo hi",
        "tqdm==1;$(id)",
        "tqdm==1\nx==2",
        "unknown==1",
    ],
)
def test_refused_specs_change_nothing_even_next_to_a_good_one(
    make_repo: Callable[..., Path], run_cli: RunCli, spec: str
) -> None:
    text = b"tqdm==4.67.3\r\nav==17.0.1"
    repo = make_repo({REQ: text})
    result = run_cli("--repo", repo, "lts", "pin", "av==18.0.0", spec, "--lts")
    assert result.code == 2
    assert result.err.startswith("error:")
    assert "Traceback" not in result.err
    assert (repo / REQ).read_bytes() == text


def test_add_appends_in_the_file_style(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({REQ: b"tqdm==4.67.3\r\nav==17.0.1"})
    result = run_cli(
        "--repo", repo, "--json", "lts", "pin", "new-pkg==0.1", "av==18.0.0", "--lts", "--add"
    )
    assert result.code == 0, result.err
    assert (repo / REQ).read_bytes() == b"tqdm==4.67.3\r\nav==18.0.0\r\nnew-pkg==0.1"
    data = json.loads(result.out)
    assert (data["ok"], data["dry_run"]) == (True, False)
    assert [(c["name"], c["line"], c["added"]) for c in data["changes"]] == [
        ("av", 2, False),
        ("new-pkg", 3, True),
    ]


def test_nothing_to_change(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({REQ: "tqdm==4.67.3\n"})
    result = run_cli("--repo", repo, "lts", "pin", "tqdm==4.67.3", "--lts")
    assert result.code == 0
    assert "already tqdm==4.67.3" in result.out and "next steps" not in result.out
