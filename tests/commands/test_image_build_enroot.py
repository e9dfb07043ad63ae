"""`uvdock image enroot`: enroot import of the local image; no enroot is exit 3."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli
from samples.engines import fake_engine


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"README": "x\n"})


def test_dry_run_default(run_cli: RunCli, repo: Path) -> None:
    result = run_cli("--repo", repo, "--dry-run", "image", "enroot")
    assert result.code == 0, result.err
    assert shlex.split(result.out) == [
        "enroot",
        "import",
        "-o",
        "megatron-lm.sqsh",
        "dockerd://megatron-lm:local",
    ]


def test_output_option_and_podman_store(run_cli: RunCli, repo: Path) -> None:
    result = run_cli(
        "--repo", repo, "--engine", "podman", "--dry-run", "image", "enroot", "--output", "x.sqsh"
    )
    assert shlex.split(result.out) == [
        "enroot",
        "import",
        "-o",
        "x.sqsh",
        "podman://megatron-lm:local",
    ]


def test_missing_enroot_exits_3(
    run_cli: RunCli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(only_git))
    result = run_cli("--repo", repo, "image", "enroot")
    assert result.code == 3
    assert "enroot is not installed" in result.err


def test_runs_enroot(
    run_cli: RunCli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_engine(tmp_path, monkeypatch, "enroot")
    result = run_cli("--repo", repo, "image", "enroot", "--output", "out.sqsh")
    assert result.code == 0, result.err
    assert calls.read_text().split()[1:] == [
        "import",
        "-o",
        "out.sqsh",
        "dockerd://megatron-lm:local",
    ]
    assert "wrote out.sqsh" in result.out
