"""`uvdock lts drift`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import RunCli, git

REQ = "docker/lts/requirements.txt"
LOCK = (
    'version = 1\n\n[[package]]\nname = "a"\nversion = "{}"\n\n'
    '[[package]]\nname = "b"\nversion = "1.0"\n'
)


def test_real_repo_working_tree(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "lts", "drift")
    assert result.code == 0, result.err
    assert "uv.lock (working tree)" in result.out
    assert "behind (1 major)" in result.out  # av 17.0.1 -> 18.0.0
    data = json.loads(run_cli("--repo", megatron_repo, "--json", "lts", "drift").out)
    by_name = {d["name"]: d for d in data["drift"]}
    assert by_name["tqdm"]["lts"] == "4.67.3" and by_name["tqdm"]["status"] == "behind"
    assert by_name["emerging_optimizers"]["lts"] == "v0.2.0"
    assert "einops" not in by_name  # the same version is not drift (see --all)
    everything = json.loads(run_cli("--repo", megatron_repo, "--json", "lts", "drift", "--all").out)
    assert len(everything["drift"]) == 15


def test_base_ref_is_the_default_and_is_named(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({REQ: "a==1.0\nb==1.0\n", "uv.lock": LOCK.format("2.0")})
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    (repo / "uv.lock").write_text(LOCK.format("1.5"))
    data = json.loads(run_cli("--repo", repo, "--json", "lts", "drift").out)
    assert data["lock"] == "origin/main:uv.lock"
    assert data["drift"] == [
        {
            "name": "a",
            "lts": "1.0",
            "lock": "2.0",
            "status": "behind",
            "level": "major",
            "distance": 1,
        }
    ]
    data = json.loads(run_cli("--repo", repo, "--json", "lts", "drift", "--working-tree").out)
    assert data["lock"] == "uv.lock (working tree)" and data["drift"][0]["lock"] == "1.5"
    other = repo / "other.lock"
    other.write_text(LOCK.format("0.5"))
    data = json.loads(run_cli("--repo", repo, "--json", "lts", "drift", "--lock", other).out)
    assert data["drift"][0]["status"] == "ahead"


def test_no_lock_anywhere(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({REQ: "a==1.0\n"})
    result = run_cli("--repo", repo, "lts", "drift")
    assert result.code == 3 and "no uv.lock" in result.err


def test_a_named_base_that_does_not_resolve_is_refused(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    # Falling back to the working tree is for a missing default base-ref; a revision the user
    # named must be the one compared, or the report describes the wrong lock.
    missing = run_cli("--repo", megatron_repo, "lts", "drift", "--base", "HEAD~5")
    assert missing.code == 2
    assert "--base HEAD~5" in missing.err and "no such revision" in missing.err
    (megatron_repo / "uv.lock").rename(megatron_repo / "uv.lock.moved")
    git(megatron_repo, "commit", "-qam", "no lock")
    without = run_cli("--repo", megatron_repo, "lts", "drift", "--base", "HEAD")
    assert without.code == 2 and "has no uv.lock" in without.err
    assert run_cli("--repo", megatron_repo, "lts", "drift", "--base", "HEAD~1").code == 0
