"""doctor_checks: version rules and the skip chain, run locally (`--engine local`)."""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, commit_all
from samples.projects import pyproject_requiring_uv

from uvdock.cli.spec import GlobalOptions
from uvdock.context import Context
from uvdock.doctor import checks as doctor_checks
from uvdock.ui.output import Output


def test_check_result_json() -> None:
    assert doctor_checks.CheckResult("a", "skip", "d").to_json()["ok"] is None
    assert doctor_checks.CheckResult("a", "warn", "d", "f").to_json()["ok"] is True
    assert doctor_checks.CheckResult("a", "fail", "d", "f").to_json() == {
        "name": "a",
        "ok": False,
        "status": "fail",
        "detail": "d",
        "fix": "f",
        "seconds": 0.0,
    }


@pytest.fixture
def local_repo(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Path]:
    """A repo checked with --engine local: the host's uv stands in for the container's."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)  # answers what its version is
    monkeypatch.setenv("UVDOCK_VENV", str(venv))
    monkeypatch.setenv("UVDOCK_UV_CACHE", str(tmp_path / "cache" / "uv"))

    def make(required: str = ">=0.5", lts: str | None = "tqdm==4.67.3\n") -> Path:
        files: dict[str, str | bytes] = {
            "pyproject.toml": pyproject_requiring_uv(required),
            "docker/.ngc_version.dev": "nvcr.io/nvidia/pytorch:26.06-py3\n",
            "docker/.ngc_version.lts": "nvcr.io/nvidia/pytorch:25.09-py3",  # a lane needs a pin
        }
        if lts is not None:
            files["docker/lts/requirements.txt"] = lts
        repo = make_repo({**files, "pyproject.toml": pyproject_requiring_uv(">=0.5")})
        # The host uv enforces required-version too: lock first, then set it.
        subprocess.run(["uv", "lock", "--offline", "-q"], cwd=repo, check=True, capture_output=True)
        (repo / "pyproject.toml").write_text(pyproject_requiring_uv(required))
        commit_all(repo, "lock")
        return repo

    return make


def _run(repo: Path) -> dict[str, doctor_checks.CheckResult]:
    ctx = Context(options=GlobalOptions(repo=str(repo), engine="local"), out=Output())
    return {r.name: r for r in doctor_checks.run_checks(ctx)}


def test_all_pass_locally(local_repo: Callable[..., Path]) -> None:
    results = _run(local_repo())
    assert {name: r.status for name, r in results.items()} == {
        "git repository": "pass",
        "engine": "pass",
        "image or container": "pass",
        "repository mount": "pass",
        "uv in the container": "pass",
        "venv": "pass",
        "Python": "pass",
        "base ref": "warn",  # no origin/main in a repository without remotes
        "base-image pins": "pass",
        "uv.lock current": "pass",
        "uv cache disk space": results["uv cache disk space"].status,  # depends on the machine
        "LTS requirements": "pass",
    }
    assert results["uv cache disk space"].status in ("pass", "warn")
    assert "GB free at" in results["uv cache disk space"].detail


def test_uv_version_mismatch_fails_and_skips_the_lock_check(
    local_repo: Callable[..., Path],
) -> None:
    results = _run(local_repo(required="==0.1.0"))
    assert results["uv in the container"].status == "fail"
    assert "does not satisfy required-version ==0.1.0" in results["uv in the container"].detail
    assert results["uv.lock current"].status == "skip"
    assert results["uv.lock current"].detail == "skipped: uv in the container failed"


def test_stale_lock_names_uvdock_lock(local_repo: Callable[..., Path]) -> None:
    repo = local_repo()
    text = (
        (repo / "pyproject.toml").read_text().replace("dependencies = []", 'dependencies = ["six"]')
    )
    (repo / "pyproject.toml").write_text(text)
    result = _run(repo)["uv.lock current"]
    assert result.status == "fail"
    assert result.fix == "uvdock lock"


def test_conflicted_lock_names_lock_resolve(local_repo: Callable[..., Path]) -> None:
    repo = local_repo()
    lock = (repo / "uv.lock").read_text()
    (repo / "uv.lock").write_text("<<<<<<< HEAD\n" + lock + "=======\n" + lock + ">>>>>>> theirs\n")
    assert _run(repo)["uv.lock current"].fix == "uvdock lock resolve"


def test_missing_venv_and_broken_lts_file(
    local_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = local_repo(lts="tqdm==4.67.3\nnot a requirement ===\n")
    monkeypatch.setenv("UVDOCK_VENV", str(tmp_path / "no-venv"))
    results = _run(repo)
    assert results["venv"].status == "fail"
    assert results["LTS requirements"].status == "fail"
    assert results["LTS requirements"].detail.startswith("docker/lts/requirements.txt:2:")


def test_pin_drift_fails(local_repo: Callable[..., Path]) -> None:
    repo = local_repo()
    (repo / "docker" / "Dockerfile.ci.dev").write_text(
        "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.01-py3\nFROM ${FROM_IMAGE_NAME} AS main\n"
    )
    result = _run(repo)["base-image pins"]
    assert result.status == "fail"
    assert "25.01-py3" in result.detail


def test_low_disk_warns(local_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = local_repo()
    monkeypatch.setattr(doctor_checks, "LOW_DISK_BYTES", 10**18)
    result = _run(repo)["uv cache disk space"]
    assert result.status == "warn"
    assert "under 5 GB" in result.detail


def test_not_a_repository_skips_the_rest(tmp_path: Path) -> None:
    ctx = Context(options=GlobalOptions(repo=str(tmp_path)), out=Output())
    results = doctor_checks.run_checks(ctx)
    assert results[0].status == "fail"
    assert "not inside a git repository" in results[0].detail
    assert {r.status for r in results[1:]} == {"skip"}
    assert all(r.detail == "skipped: git repository failed" for r in results[1:])


def test_the_venv_python_is_checked_against_requires_python(
    local_repo: Callable[..., Path],
) -> None:
    repo = local_repo()
    ours = platform.python_version()
    assert _run(repo)["Python"].detail == f"Python {ours} satisfies requires-python >=3.11"
    text = (repo / "pyproject.toml").read_text().replace(">=3.11", ">=3.99")
    (repo / "pyproject.toml").write_text(text)
    result = _run(repo)["Python"]
    assert result.status == "fail"
    assert f"Python {ours}" in result.detail and "requires-python >=3.99" in result.detail
    assert "downloads" in result.detail  # why it matters: uv fetches another CPython


def test_each_check_is_reported_as_it_finishes_with_its_time(
    local_repo: Callable[..., Path],
) -> None:
    repo = local_repo()
    seen: list[doctor_checks.CheckResult] = []
    ctx = Context(options=GlobalOptions(repo=str(repo), engine="local"), out=Output())
    results = doctor_checks.run_checks(ctx, on_result=seen.append)
    assert seen == results and all(r.seconds >= 0 for r in results)


def test_the_text_report_gives_each_check_its_time(
    local_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    result = run_cli("--repo", local_repo(), "--engine", "local", "doctor")
    checks = [line for line in result.out.splitlines() if line.startswith("[")]
    assert len(checks) >= 10
    assert all(re.search(r"\(\d+\.\d s\)$", line) for line in checks), checks


def test_a_network_failure_is_not_advised_an_offline_sync(
    local_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    repo = local_repo()
    text = (
        (repo / "pyproject.toml")
        .read_text()
        .replace("dependencies = []", 'dependencies = ["leftpad-uvdock-test"]')
    )
    text += (
        '\n[[tool.uv.index]]\nname = "none"\nurl = "https://pypi.invalid/simple"\ndefault = true\n'
    )
    (repo / "pyproject.toml").write_text(text)
    result = _run(repo)["uv.lock current"]
    assert result.status == "fail"
    assert "--offline" not in result.fix
    assert "network" in result.fix


def test_the_page_doctor_names_says_what_an_image_needs() -> None:
    from uvdock.doctor.checks import FORK_DOC

    page = (Path(__file__).resolve().parents[2] / FORK_DOC).read_text()
    for needed in (
        "uv on PATH",
        "/opt/venv",
        "requires-python",
        'engine-args = ["--network=host"]',
    ):
        assert needed in page
