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


@pytest.mark.parametrize(
    ("engine", "options", "expected"),
    [
        (["--engine", "docker"], [], ["-o", "megatron-lm.sqsh", "dockerd://megatron-lm:local"]),
        (
            ["--engine", "podman"],
            ["--output", "x.sqsh"],
            ["-o", "x.sqsh", "podman://megatron-lm:local"],
        ),
        (
            ["--engine", "podman"],
            ["--lts"],
            ["-o", "megatron-lm-lts.sqsh", "podman://megatron-lm:local-lts"],
        ),
    ],
)
def test_dry_run_prints_the_import_line(
    run_cli: RunCli, repo: Path, engine: list[str], options: list[str], expected: list[str]
) -> None:
    result = run_cli("--repo", repo, *engine, "--dry-run", "image", "enroot", *options)
    assert result.code == 0, result.err
    assert shlex.split(result.out) == ["enroot", "import", *expected]


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
    calls = fake_engine(tmp_path, monkeypatch, "docker")  # `image inspect`: present, has CMD
    enroot = tmp_path / "bin" / "enroot"
    enroot.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n: > "$3"\n')  # writes its -o file
    enroot.chmod(0o755)
    monkeypatch.chdir(tmp_path)  # --output is taken from where uvdock was started
    result = run_cli(
        "--repo", repo, "--engine", "docker", "image", "enroot", "--output", "out.sqsh"
    )
    assert result.code == 0, result.err
    assert calls.read_text().splitlines()[-1].split() == [
        "import",
        "-o",
        str(tmp_path / "out.sqsh.part"),
        "dockerd://megatron-lm:local",
    ]
    assert (tmp_path / "out.sqsh").is_file() and not (tmp_path / "out.sqsh.part").exists()
    assert (tmp_path / "out.sqsh.image").read_text() == "megatron-lm:local\n"  # for --engine srun
    assert "wrote" in result.out and "out.sqsh" in result.out
