"""Real uv in the podman test image, offline against the local wheel folder: `add` with
specs a shell would choke on, and `lock --check` telling a stale lock from uv failing."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, commit_all

pytestmark = pytest.mark.engine


def _podman(engine_image: str) -> list[str]:
    return ["--engine", "podman", "--image", engine_image]


def _dependencies(repo: Path) -> list[str]:
    with (repo / "pyproject.toml").open("rb") as fh:
        return list(tomllib.load(fh)["project"]["dependencies"])


def test_real_add_of_ranges_and_markers(
    engine_image: str, uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = uv_project(("alpha",))
    assert run_cli("--repo", repo, *_podman(engine_image), "lock").code == 0
    specs = ["gamma>=1,<2", 'delta!=3.0; python_version >= "3.8"', "beta~=2.0"]
    result = run_cli("--repo", repo, *_podman(engine_image), "add", *specs)
    assert result.code == 0, result.err
    deps = _dependencies(repo)
    assert "gamma>=1,<2" in deps
    # uv writes the marker in its normal form (python_full_version), the specifier as given.
    assert "delta!=3.0 ; python_full_version >= '3.8'" in deps, deps
    assert any(d.startswith("beta~=2.0") for d in deps), deps
    lock = (repo / "uv.lock").read_text()
    # gamma's range picked 1.0.0 out of 0.3.0 / 1.0.0 / 2.0.0
    assert 'name = "gamma"\nversion = "1.0.0"' in lock
    assert 'name = "delta"' in lock and 'name = "beta"' in lock


def test_lock_check_current_then_stale(
    engine_image: str, uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = uv_project(("alpha",))
    assert run_cli("--repo", repo, *_podman(engine_image), "lock").code == 0
    current = run_cli("--repo", repo, *_podman(engine_image), "lock", "--check")
    assert current.code == 0, current.err
    assert "up to date" in current.out
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('["alpha"]', '["alpha", "gamma"]'))
    stale = run_cli("--repo", repo, *_podman(engine_image), "lock", "--check")
    assert stale.code == 1
    assert "uv.lock is out of date" in stale.err


def test_a_python_uv_cannot_fetch_is_not_a_stale_lock(
    engine_image: str,
    uv_project: Callable[..., Path],
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without retries uv gives up on the unreachable host at once instead of after its DNS
    # retries (about 15 s on a loaded machine); the failure is the same.
    monkeypatch.setenv("UVDOCK_ENGINE_ARGS", "-e UV_HTTP_RETRIES=0")
    repo = uv_project(("alpha",))
    assert run_cli("--repo", repo, *_podman(engine_image), "lock").code == 0
    pyproject = repo / "pyproject.toml"
    # The image has Python 3.11 and no network to python-build-standalone: uv must download
    # a Python for this and cannot (uv exit 2). The lock itself is not the problem.
    pyproject.write_text(pyproject.read_text().replace(">=3.11", ">=3.14"))
    commit_all(repo, "needs a newer Python")
    result = run_cli("--repo", repo, *_podman(engine_image), "lock", "--check")
    assert result.code == 3, result.err
    assert "out of date" not in result.err
    assert "could not run" in result.err
    assert "uv's last lines" in result.err


def test_a_broken_pyproject_is_uvs_failure_not_a_stale_lock(
    engine_image: str, uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = uv_project(("alpha",))
    assert run_cli("--repo", repo, *_podman(engine_image), "lock").code == 0
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('["alpha"]', '["alpha >= not-a-version"]'))
    result = run_cli("--repo", repo, *_podman(engine_image), "lock", "--check")
    assert result.code == 1
    assert "out of date" not in result.err
    assert "for a reason other than a stale lock" in result.err
    assert "\nerror: " in result.err  # uv's own last lines are shown
