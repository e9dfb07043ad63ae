"""`uvdock sync` on a copy of Megatron-LM: the real extras/groups and the protected packages."""

from __future__ import annotations

import shlex
from pathlib import Path

from conftest import RunCli


def test_dry_run_sync_uses_extra_dev_and_protects_base_image_packages(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    result = run_cli(
        "--repo", megatron_repo, "--dry-run", "--engine", "docker", "--container", "ci", "sync"
    )
    assert result.code == 0, result.err
    argv = shlex.split(result.out.strip())
    uv = argv[argv.index("uv") :]
    # The image's own selection (Dockerfile.ci.dev's uv sync line, IMAGE_TYPE=dev), then the
    # profile's group; --inexact: nothing the image installed is removed.
    assert uv[:16] == [
        *("uv", "sync", "--locked", "--inexact"),
        *("--extra", "dev", "--extra", "mlm", "--extra", "ssm", "--extra", "te"),
        *("--group", "no_pypi_wheels", "--group", "test"),
    ]
    protected = {uv[i + 1] for i, word in enumerate(uv) if word == "--no-install-package"}
    assert {"torch", "torchvision", "triton", "nvidia-nccl-cu12"} <= protected
    assert len(protected) == 16
    assert argv[:4] == ["docker", "exec", "-i", "-w"] and "ci" in argv


def test_lts_profile_needs_the_opt_in(megatron_repo: Path, run_cli: RunCli) -> None:
    refused = run_cli("--repo", megatron_repo, "--dry-run", "sync", "--profile", "lts")
    assert refused.code == 2
    assert "--lts" in refused.err and "explicitly" in refused.err
    allowed = run_cli(
        "--repo",
        megatron_repo,
        "--dry-run",
        "--engine",
        "podman",
        "--container",
        "ci",
        "sync",
        "--profile",
        "lts",
        "--lts",
    )
    assert allowed.code == 0, allowed.err
    lines = allowed.out.strip().splitlines()
    # Dockerfile.ci.lts syncs --extra mlm --extra ssm; the lts profile adds the lts extra.
    assert "uv sync --locked --inexact --extra lts --extra mlm --extra ssm --group test" in lines[0]
    assert lines[1].endswith("uv pip install -r docker/lts/requirements.txt")


def test_unknown_group_is_refused_with_the_list(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "--dry-run", "sync", "--group", "nope")
    assert result.code == 2
    assert "neither an extra nor a dependency group" in result.err
    assert "linting" in result.err


def test_exact_is_an_opt_in(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli(
        "--repo",
        megatron_repo,
        "--dry-run",
        "--engine",
        "docker",
        "--container",
        "ci",
        "sync",
        "--exact",
    )
    assert result.code == 0, result.err
    uv = shlex.split(result.out.strip())
    assert "--exact" in uv and "--inexact" not in uv


def test_lint_profile_removes_nothing_either(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli(
        "--repo",
        megatron_repo,
        "--dry-run",
        "--engine",
        "docker",
        "--container",
        "ci",
        "sync",
        "--profile",
        "lint",
    )
    assert result.code == 0, result.err
    assert result.out.strip().endswith("uv sync --locked --inexact --only-group linting")


def test_lts_profile_on_the_2026_layout_reads_the_dev_dockerfile_as_lts(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    # Megatron-LM early 2026: no Dockerfile.ci.lts; the LTS rows build Dockerfile.ci.dev with
    # IMAGE_TYPE=lts. That file's `uv sync` line, read for lts, is the LTS image's selection.
    history = Path(__file__).parents[1] / "data" / "megatron-lm-history" / "2026-02-04-d959620907"
    (megatron_repo / "docker" / "Dockerfile.ci.lts").unlink()
    dockerfile = history / "docker" / "Dockerfile.ci.dev"
    (megatron_repo / "docker" / "Dockerfile.ci.dev").write_bytes(dockerfile.read_bytes())
    result = run_cli(
        "--repo", megatron_repo, "--dry-run", "--engine", "podman", "--container", "ci", "sync", "--profile", "lts", "--lts"
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "not readable" not in result.err
    assert "uv sync --locked --inexact --extra lts --extra mlm --group test" in result.out
