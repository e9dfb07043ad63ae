"""`uvdock image pull`: registry host from the gitlab remote, pull + tag, never a credential."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, git
from samples.engines import fake_engine

HOST = "gitlab-master.example.com"
TOKEN = "glpat-abcdefghijklmnopqrstu"
DEV = f"{HOST}/adlr/megatron-lm/mcore_ci_dev:main"
LTS = f"{HOST}/adlr/megatron-lm/mcore_ci_lts:main"


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"README": "x\n"})


def _with_remote(repo: Path, url: str, name: str = "gitlab") -> Path:
    git(repo, "remote", "add", name, url)
    return repo


def _lines(out: str) -> list[list[str]]:
    return [shlex.split(line) for line in out.splitlines()]


@pytest.mark.parametrize(
    "url",
    [
        f"https://oauth2:{TOKEN}@{HOST}:5005/adlr/megatron-lm.git",
        f"git@{HOST}:adlr/megatron-lm.git",
        f"ssh://git@{HOST}:12051/adlr/megatron-lm.git",
    ],
)
@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_dry_run_pull_and_tag(run_cli: RunCli, repo: Path, url: str, engine: str) -> None:
    _with_remote(repo, url)
    result = run_cli("--repo", repo, "--engine", engine, "--dry-run", "-v", "image", "pull")
    assert result.code == 0, result.err
    assert _lines(result.out) == [[engine, "pull", DEV], [engine, "tag", DEV, "megatron-lm:local"]]
    assert TOKEN not in result.out + result.err
    assert ":5005" not in result.out and ":12051" not in result.out


def test_lts_pulls_the_lts_image(run_cli: RunCli, repo: Path) -> None:
    _with_remote(repo, f"git@{HOST}:adlr/megatron-lm.git")
    result = run_cli("--repo", repo, "--engine", "docker", "--dry-run", "image", "pull", "--lts")
    assert _lines(result.out) == [
        ["docker", "pull", LTS],
        ["docker", "tag", LTS, "megatron-lm:local-lts"],
    ]


def test_configured_remote_and_images(run_cli: RunCli, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(
        {
            "uvdock.toml": 'gitlab-remote = "internal"\n'
            'registry-image = "team/img:dev"\nimage = "mine:local"\n'
        }
    )
    _with_remote(repo, f"https://{HOST}/team/x.git", name="internal")
    result = run_cli("--repo", repo, "--engine", "podman", "--dry-run", "image", "pull")
    assert _lines(result.out) == [
        ["podman", "pull", f"{HOST}/team/img:dev"],
        ["podman", "tag", f"{HOST}/team/img:dev", "mine:local"],
    ]


def test_no_remote_exits_3_saying_how_to_add_it(run_cli: RunCli, repo: Path) -> None:
    result = run_cli("--repo", repo, "--engine", "docker", "image", "pull")
    assert result.code == 3
    assert "no git remote named `gitlab`" in result.err
    assert "git remote add gitlab" in result.err


def test_local_path_remote_exits_3(run_cli: RunCli, repo: Path, tmp_path: Path) -> None:
    _with_remote(repo, str(tmp_path / "elsewhere.git"))
    result = run_cli("--repo", repo, "--engine", "docker", "image", "pull")
    assert result.code == 3
    assert "names no host" in result.err


def test_pull_then_tag_and_say_so(
    run_cli: RunCli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_remote(repo, f"https://oauth2:{TOKEN}@{HOST}:5005/adlr/megatron-lm.git")
    calls = fake_engine(tmp_path, monkeypatch, "docker")
    result = run_cli("--repo", repo, "--engine", "docker", "-v", "image", "pull")
    assert result.code == 0, result.err
    assert [line.split()[1:] for line in calls.read_text().splitlines()] == [
        ["pull", DEV],
        ["tag", DEV, "megatron-lm:local"],
    ]
    assert "tagged it megatron-lm:local" in result.out
    assert TOKEN not in result.out + result.err


def test_failed_pull_stops_before_tag(
    run_cli: RunCli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_remote(repo, f"git@{HOST}:adlr/megatron-lm.git")
    calls = fake_engine(tmp_path, monkeypatch, "podman", rc=125)
    # The example host has no address here; a registry that resolves gets the login hint.
    monkeypatch.setattr("uvdock.registry.gitlab_host.resolves", lambda host: True)
    result = run_cli("--repo", repo, "--engine", "podman", "image", "pull")
    assert result.code == 1
    steps = [c for c in calls.read_text().splitlines() if " version " not in c]  # daemon probe
    assert len(steps) == 1
    assert "access forbidden" in result.err  # the hint names the likely cause


def test_a_pull_failing_on_name_resolution_does_not_hint_access_forbidden(
    run_cli: RunCli, repo: Path
) -> None:
    import os
    import shutil

    if shutil.which("podman") is None:
        if os.environ.get("UVDOCK_REQUIRE_ENGINE"):
            pytest.fail("podman is required (UVDOCK_REQUIRE_ENGINE=1)")
        pytest.skip("podman is not installed (run .ci/engine-setup)")
    # .invalid never resolves (RFC 6761): the real podman fails with `no such host`.
    _with_remote(repo, "git@gitlab.registry.invalid:adlr/megatron-lm.git")
    result = run_cli("--repo", repo, "--engine", "podman", "image", "pull")
    assert result.code == 1
    assert "access forbidden" not in result.err and "docker login" not in result.err
    assert "`gitlab.registry.invalid` does not resolve from here" in result.err
