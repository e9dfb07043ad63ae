"""`uvdock image build`: the command line for every variant, without an engine."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli
from samples.engines import fake_engine
from samples.image_build import BUILD_FILES, expected_build_argv


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(BUILD_FILES)


@pytest.mark.parametrize("lts", [False, True], ids=["dev", "lts"])
@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_dry_run_prints_the_build_line(run_cli: RunCli, repo: Path, engine: str, lts: bool) -> None:
    lane = ["--lts"] if lts else []
    result = run_cli("--repo", repo, "--engine", engine, "--dry-run", "image", "build", *lane)
    assert result.code == 0, result.err
    assert shlex.split(result.out) == expected_build_argv(engine, lts=lts)


def test_without_lts_never_builds_lts(run_cli: RunCli, repo: Path) -> None:
    result = run_cli("--repo", repo, "--engine", "docker", "--dry-run", "image", "build")
    assert "lts" not in result.out.lower()


@pytest.mark.parametrize("flags", [["--tag", "mine:1"], ["--lts", "--tag", "mine:1"]])
def test_tag_option(run_cli: RunCli, repo: Path, flags: list[str]) -> None:
    result = run_cli("--repo", repo, "--engine", "podman", "--dry-run", "image", "build", *flags)
    argv = shlex.split(result.out)
    assert argv[-3:] == ["-t", "mine:1", "."]
    assert argv[argv.index("--target") + 1] == "main"


def test_target_comes_from_config_and_is_never_jet(
    run_cli: RunCli, make_repo: Callable[..., Path]
) -> None:
    repo = make_repo({**BUILD_FILES, "uvdock.toml": 'build-target = "public"\n'})
    argv = shlex.split(
        run_cli("--repo", repo, "--engine", "docker", "--dry-run", "image", "build").out
    )
    assert argv[2:4] == ["--target", "public"]
    assert "jet" not in argv


def test_runs_the_engine_in_the_repo(
    run_cli: RunCli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_engine(tmp_path, monkeypatch, "docker")
    result = run_cli("--repo", repo, "--engine", "docker", "image", "build")
    assert result.code == 0, result.err
    assert "built megatron-lm:local" in result.out
    cwd, *argv = calls.read_text().split()
    assert Path(cwd) == repo
    assert argv[:3] == ["build", "--target", "main"]


def test_engine_failure_exits_1_with_a_doctor_hint(
    run_cli: RunCli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_engine(tmp_path, monkeypatch, "podman", rc=7)
    result = run_cli("--repo", repo, "--engine", "podman", "image", "build")
    assert result.code == 1
    assert "podman build exited with status 7" in result.err
    assert "uvdock doctor" in result.err


def test_missing_pin_file_exits_3(run_cli: RunCli, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"docker/Dockerfile.ci.dev": "FROM x AS main\n"})
    result = run_cli("--repo", repo, "--engine", "docker", "--dry-run", "image", "build")
    assert result.code == 3
    assert "docker/.ngc_version.dev" in result.err


def test_no_engine_exits_3(
    run_cli: RunCli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(only_git))
    result = run_cli("--repo", repo, "image", "build")
    assert result.code == 3
    assert "no container engine" in result.err


@pytest.mark.parametrize(
    ("words", "program", "message", "hint"),
    [
        (
            ("image", "build"),
            "podman",
            "podman build exited with status 7",
            "uvdock doctor LOGFILE",
        ),
        # the registry host has no address: the hint is about name resolution, not login
        (("image", "pull"), "podman", "podman pull exited with status 7", "does not resolve"),
        (("image", "enroot"), "enroot", "enroot import exited with status 7", None),
    ],
)
def test_a_failed_step_names_itself_and_its_hint(
    run_cli: RunCli,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    words: tuple[str, ...],
    program: str,
    message: str,
    hint: str | None,
) -> None:
    # The three image steps stream through one helper; CommandFailed.hint reaches the user.
    from conftest import git

    repo = make_repo(BUILD_FILES)
    git(repo, "remote", "add", "gitlab", "git@gitlab.example.com:adlr/megatron-lm.git")
    if program == "enroot":  # `image enroot` asks podman about the image first: it is there
        fake_engine(tmp_path, monkeypatch, "podman")
    fake_engine(tmp_path, monkeypatch, program, rc=7)
    monkeypatch.setattr("uvdock.registry.gitlab_host.resolves", lambda host: False)
    result = run_cli("--repo", repo, "--engine", "podman", *words)
    assert result.code == 1
    lines = result.err.splitlines()
    assert lines[0] == f"error: {message}"
    assert (hint in lines[1]) if hint else len(lines) == 1
