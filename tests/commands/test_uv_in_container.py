"""add / remove / lock / sync / run through a real podman, and the real docker CLI against it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import RunCli, engine_name, remove_container, start_container

pytestmark = pytest.mark.engine


@pytest.fixture
def container(engine_image: str, uv_project: Callable[..., Path]) -> Iterator[tuple[str, Path]]:
    """A running container that mounts a fresh project at /workspace, as developers keep one."""
    repo = uv_project(("alpha",), extras={"dev": ["delta"]}, groups={"test": ["gamma"]})
    name = engine_name("test")
    start_container(engine_image, repo, name)
    yield name, repo
    remove_container(name)


def _podman(engine_image: str) -> list[str]:
    return ["--engine", "podman", "--image", engine_image]


def test_lock_then_check_fresh_and_stale(
    engine_image: str, uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = uv_project(("beta",))
    result = run_cli("--repo", repo, *_podman(engine_image), "lock")
    assert result.code == 0, result.err
    lock = (repo / "uv.lock").read_text()
    assert 'name = "beta"' in lock and 'name = "alpha"' in lock
    # The container's uv is the one used, and it is named.
    assert re.search(r"^uv \d+\.\d+\.\d+, in a fresh podman container of ", result.out, re.M)
    assert run_cli("--repo", repo, *_podman(engine_image), "lock", "--check").code == 0

    pyproject = repo / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('dependencies = ["beta"]', 'dependencies = ["beta", "gamma"]')
    )
    stale = run_cli("--repo", repo, *_podman(engine_image), "lock", "--check")
    assert stale.code == 1
    assert "out of date" in stale.err
    assert (repo / "uv.lock").read_text() == lock


def test_add_and_remove_show_lock_diff_and_commit(
    engine_image: str, uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = uv_project(("alpha",))
    assert run_cli("--repo", repo, *_podman(engine_image), "lock").code == 0
    added = run_cli("--repo", repo, *_podman(engine_image), "add", "gamma")
    assert added.code == 0, added.err
    assert "gamma" in (repo / "pyproject.toml").read_text()
    assert 'name = "gamma"' in (repo / "uv.lock").read_text()
    assert "gamma" in added.out and "git add pyproject.toml uv.lock" in added.out
    assert "build: add gamma dependency" in added.out

    removed = run_cli("--repo", repo, *_podman(engine_image), "remove", "gamma")
    assert removed.code == 0, removed.err
    assert "gamma" not in (repo / "pyproject.toml").read_text()
    assert 'name = "gamma"' not in (repo / "uv.lock").read_text()


def test_add_to_an_extra_named_as_group_is_refused_before_anything_runs(
    engine_image: str, uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = uv_project(("alpha",), extras={"dev": ["delta"]})
    before = (repo / "pyproject.toml").read_bytes()
    result = run_cli("--repo", repo, *_podman(engine_image), "add", "gamma", "--group", "dev")
    assert result.code == 2
    assert "--optional dev" in result.err
    assert (repo / "pyproject.toml").read_bytes() == before


def test_sync_into_the_container_venv_by_exec(container: tuple[str, Path], run_cli: RunCli) -> None:
    name, repo = container
    assert run_cli("--repo", repo, "--engine", "podman", "--container", name, "lock").code == 0
    result = run_cli("--repo", repo, "--engine", "podman", "--container", name, "sync")
    assert result.code == 0, result.err
    probe = subprocess.run(
        [
            "podman",
            "exec",
            name,
            "/opt/venv/bin/python",
            "-c",
            "import alpha, delta, gamma; print(alpha.VERSION)",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "1.1.0"


def test_exec_refuses_a_container_that_mounts_another_checkout(
    container: tuple[str, Path], uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    name, _ = container
    other = uv_project(("alpha",))
    result = run_cli("--repo", other, "--engine", "podman", "--container", name, "lock")
    assert result.code == 3
    assert "not this repository" in result.err
    assert not (other / "uv.lock").exists()


def test_exec_into_a_missing_container_is_exit_3(
    uv_project: Callable[..., Path], engine_image: str, run_cli: RunCli
) -> None:
    result = run_cli(
        "--repo", uv_project(), "--engine", "podman", "--container", "no-such-uvdock-ctr", "lock"
    )
    assert result.code == 3
    assert "no container named no-such-uvdock-ctr" in result.err


def test_missing_image_says_how_to_get_one(
    uv_project: Callable[..., Path], engine_image: str, run_cli: RunCli
) -> None:
    result = run_cli(
        "--repo", uv_project(), "--engine", "podman", "--image", "localhost/absent:none", "lock"
    )
    assert result.code == 3
    assert "uvdock image build" in result.err and "uvdock image pull" in result.err


def test_run_returns_the_command_exit_code(container: tuple[str, Path], run_cli: RunCli) -> None:
    name, repo = container
    result = run_cli(
        "--repo", repo, "--engine", "podman", "--container", name, "run", "--", "sh", "-c", "exit 7"
    )
    assert result.code == 7


def test_lock_with_the_docker_cli_against_podman(
    docker_host: str,
    engine_image: str,
    uv_project: Callable[..., Path],
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", docker_host)
    repo = uv_project(("beta",))
    result = run_cli("--repo", repo, "--engine", "docker", "--image", engine_image, "lock")
    assert result.code == 0, result.err
    assert 'name = "beta"' in (repo / "uv.lock").read_text()
    assert (
        run_cli(
            "--repo", repo, "--engine", "docker", "--image", engine_image, "lock", "--check"
        ).code
        == 0
    )


def _tagged_processes(name: str) -> str:
    probe = subprocess.run(
        [
            "podman",
            "exec",
            name,
            "sh",
            "-c",
            "grep -l UVDOCK_RUN= /proc/[0-9]*/environ 2>/dev/null || true",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip()


def test_ctrl_c_stops_the_command_inside_the_container(container: tuple[str, Path]) -> None:
    name, repo = container
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvdock",
            "--repo",
            str(repo),
            "--engine",
            "podman",
            "--container",
            name,
            "run",
            "--",
            "sleep",
            "120",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not _tagged_processes(name):
        assert time.monotonic() < deadline, "the command never started in the container"
        assert child.poll() is None, child.communicate()
        time.sleep(0.2)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert "Traceback" not in err
    assert _tagged_processes(name) == ""


def test_a_container_recreated_under_the_same_name_is_checked_again(
    container: tuple[str, Path],
    engine_image: str,
    uv_project: Callable[..., Path],
    run_cli: RunCli,
) -> None:
    name, repo = container
    assert (
        run_cli("--repo", repo, "--engine", "podman", "--container", name, "run", "--", "true").code
        == 0
    )
    other = uv_project(("alpha",))
    remove_container(name)
    start_container(engine_image, other, name)
    # Same name, another checkout mounted: the remembered check must not carry over.
    result = run_cli(
        "--repo", repo, "--engine", "podman", "--container", name, "run", "--", "touch", "ran"
    )
    assert result.code == 3
    assert "not this repository" in result.err
    assert not (other / "ran").exists() and not (repo / "ran").exists()

    remove_container(name)
    start_container(engine_image, repo, name)
    again = run_cli(
        "--repo", repo, "--engine", "podman", "--container", name, "run", "--", "touch", "ran"
    )
    assert again.code == 0, again.err
    assert (repo / "ran").exists()


def test_files_the_container_writes_go_back_to_the_invoking_user(
    engine_image: str,
    uv_project: Callable[..., Path],
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The container runs as root; under `sudo uvdock ...` the files belong to the sudoer.
    monkeypatch.setenv("SUDO_UID", "4321")
    monkeypatch.setenv("SUDO_GID", "4322")
    repo = uv_project(("alpha",))
    result = run_cli("--repo", repo, "--engine", "podman", "--image", engine_image, "lock")
    assert result.code == 0, result.err
    stat = (repo / "uv.lock").stat()
    assert (stat.st_uid, stat.st_gid) == (4321, 4322)


def test_invoking_user() -> None:
    from uvdock.run.ownership import invoking_user

    if os.getuid() == 0:
        assert invoking_user({}) is None
        assert invoking_user({"SUDO_UID": "1000", "SUDO_GID": "1001"}) == (1000, 1001)
    else:
        assert invoking_user({"SUDO_UID": "1000"}) == (os.getuid(), os.getgid())
