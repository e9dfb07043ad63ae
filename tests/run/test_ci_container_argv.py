"""What the CI container adds to uv's argv and says about where it runs (dry runs and
--engine local; no engine needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RunCli, init_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = init_repo(tmp_path / "repo")
    (path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1.0"\n')
    return path


@pytest.mark.parametrize(("flag", "uv"), [("-q", "uv -q lock"), ("-v", "uv -v lock")])
def test_quiet_and_verbose_are_passed_on_to_uv(
    repo: Path, run_cli: RunCli, flag: str, uv: str
) -> None:
    result = run_cli(
        "--repo", repo, "--dry-run", flag, "--engine", "podman", "--image", "i:1", "lock"
    )
    assert result.code == 0, result.err
    assert result.out.rstrip().endswith(uv)
    assert "UV_LINK_MODE=copy" in result.out and "--init" in result.out


@pytest.mark.parametrize(
    "options",
    [
        ["--image", "--privileged"],
        ["--image=-v/:/host"],
        ["--container=-x"],
        ["--container", "--privileged"],
    ],
)
def test_option_shaped_names_are_refused(repo: Path, run_cli: RunCli, options: list[str]) -> None:
    result = run_cli("--repo", repo, "--dry-run", "--engine", "podman", *options, "lock")
    assert result.code == 2, result.err
    assert "--privileged" not in result.out and "podman" not in result.out


@pytest.mark.parametrize(
    "options",
    [["--image", "--privileged"], ["--image=-v/:/host"], ["--container", "--privileged"]],
)
def test_option_shaped_names_are_refused_before_the_engine_is_asked(
    repo: Path, run_cli: RunCli, options: list[str]
) -> None:
    # Not a dry run: the image / container probe must not receive the name as an option.
    result = run_cli("--repo", repo, "--engine", "podman", *options, "run", "--", "true")
    assert result.code == 2, result.err
    assert "would be read as an option" in result.err


def test_local_by_hand_without_uv_says_what_is_true(
    repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = run_cli("--repo", repo, "--engine", "local", "lock")
    assert result.code == 3, result.err
    assert "not found on PATH" in result.err and "container" not in result.err


def test_a_local_uv_that_cannot_start_is_named_as_local(
    repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    broken = bin_dir / "uv"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    result = run_cli("--repo", repo, "--engine", "local", "lock")
    assert result.code == 3, result.err
    assert "local uv" in result.err and "not found in the container" not in result.err


@pytest.mark.parametrize(
    "words",
    [
        ["image", "build", "--tag=--privileged"],
        ["--image=-x", "image", "enroot"],
        ["--image=--rm", "image", "pull"],
    ],
)
def test_image_commands_refuse_option_shaped_names(
    megatron_repo: Path, run_cli: RunCli, words: list[str]
) -> None:
    from conftest import git

    git(megatron_repo, "remote", "add", "gitlab", "https://gitlab.example.com/adlr/megatron-lm.git")
    result = run_cli("--repo", megatron_repo, "--dry-run", "--engine", "docker", *words)
    assert result.code == 2, result.err
    assert "would be read as an option" in result.err
