"""`uvdock doctor`: logs (file / stdin, human / --json) and the setup checks, with a real engine."""

from __future__ import annotations

import io
import json
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import RunCli, engine_name, remove_container, start_container
from samples.projects import pyproject_requiring_uv

CORPUS = Path(__file__).resolve().parents[1] / "data" / "doctor"

PYPROJECT = pyproject_requiring_uv(">=0.13")


def test_log_file_names_cause_fix_and_command(run_cli: RunCli) -> None:
    result = run_cli("doctor", CORPUS / "group-not-defined.log")
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "line 2: error: Group `dev` is not defined in the project's `dependency-groups` table",
        "  cause:   `dev` is not a dependency group; in Megatron-LM `dev` and `lts` are extras "
        "([project.optional-dependencies]), so `--group dev` fails",
        "  fix:     pass `--extra dev` instead of `--group dev` (uvdock sync picks the right flag)",
        "  run:     uvdock sync --extra dev",
    ]


def test_stdin_and_json(run_cli: RunCli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO((CORPUS / "stale-lock.log").read_text()))
    result = run_cli("--json", "doctor", "-")
    assert result.code == 0
    payload = json.loads(result.out)
    assert payload["findings"] == [
        {
            "signature": "stale-lock",
            "line": "error: The lockfile at `uv.lock` needs to be updated, "
            "but `--locked` was provided.",
            "line_number": 4,
            "cause": "uv.lock does not match pyproject.toml "
            "(a dependency changed without relocking)",
            "fix": "relock inside the CI container with the container's uv, then commit uv.lock",
            "command": "uvdock lock",
        }
    ]
    assert payload["error_lines"] == []


def test_unknown_log_exits_1_with_error_lines(run_cli: RunCli) -> None:
    result = run_cli("doctor", CORPUS / "unknown.log")
    assert result.code == 1
    assert "no known failure signature" in result.err
    assert (
        "  15: fatal: not a git repository (or any of the parent directories): .git"
        in result.out.splitlines()
    )
    payload = json.loads(run_cli("--json", "doctor", CORPUS / "unknown.log").out)
    assert payload["findings"] == []
    assert [e["line_number"] for e in payload["error_lines"]] == [9, 12, 14, 15]


def test_log_output_is_redacted(run_cli: RunCli, tmp_path: Path) -> None:
    log = tmp_path / "pull.log"
    log.write_text(
        "fatal: unable to access 'https://oauth2:glpat-abcdefghijklmnopqrstu@gitlab.example.com/a.git/'\n"
        "Error response from daemon: denied: access forbidden\n"
    )
    for args in (("doctor", log), ("--json", "doctor", log)):
        result = run_cli(*args)
        assert "glpat-abcdefghijklmnopqrstu" not in result.out + result.err
    unknown = tmp_path / "unknown.log"
    unknown.write_text("fatal: unable to access 'https://u:hunter22@gitlab.example.com/a.git/'\n")
    result = run_cli("doctor", unknown)
    assert result.code == 1 and "hunter22" not in result.out + result.err


@pytest.mark.parametrize("make", [lambda p: p / "missing.log", lambda p: p])
def test_unreadable_log_is_refused(
    run_cli: RunCli, tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    result = run_cli("doctor", make(tmp_path))
    assert result.code == 2
    assert result.err.startswith("error: ")


def test_help_documents_the_exit_codes(run_cli: RunCli) -> None:
    result = run_cli("doctor", "--help")
    assert result.code == 0
    assert "exit 0 when a cause was named" in " ".join(result.out.split())


def test_not_a_repository(run_cli: RunCli, tmp_path: Path) -> None:
    result = run_cli("--repo", tmp_path, "--json", "doctor")
    assert result.code == 1
    checks = json.loads(result.out)["checks"]
    assert checks[0] == {
        "name": "git repository",
        "ok": False,
        "status": "fail",
        "detail": f"{tmp_path} is not inside a git repository (use --repo PATH)",
        "fix": "",
        "seconds": checks[0]["seconds"],
    }
    assert all(c["ok"] is None and c["status"] == "skip" for c in checks[1:])
    human = run_cli("--repo", tmp_path, "doctor")
    assert human.out.splitlines()[0].startswith("[FAIL] git repository: ")
    assert human.out.splitlines()[-1] == "1 check(s) failed"


# -- a real engine ------------------------------------------------------------------------


@pytest.fixture
def engine_repo(make_repo: Callable[..., Path], engine_image: str) -> Path:
    repo = make_repo(
        {
            "pyproject.toml": PYPROJECT,
            "docker/.ngc_version.dev": "nvcr.io/nvidia/pytorch:26.06-py3\n",
            "docker/.ngc_version.lts": "nvcr.io/nvidia/pytorch:25.09-py3",
        }
    )
    subprocess.run(["uv", "lock", "--offline", "-q"], cwd=repo, check=True, capture_output=True)
    return repo


@pytest.mark.engine
def test_all_checks_pass_with_the_test_image(
    run_cli: RunCli,
    engine_repo: Path,
    engine_image: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("UVDOCK_UV_CACHE", str(tmp_path / "uv-cache"))
    result = run_cli(
        "--repo", engine_repo, "--engine", "podman", "--image", engine_image, "--json", "doctor"
    )
    checks = {c["name"]: c for c in json.loads(result.out)["checks"]}
    assert result.code == 0, checks
    assert checks["uv in the container"]["detail"].startswith("uv 0.")
    assert checks["uv in the container"]["detail"].endswith("satisfies required-version >=0.13")
    assert checks["venv"]["detail"] == "/opt/venv/bin/python present"
    assert checks["uv.lock current"]["status"] == "pass"
    assert checks["LTS requirements"]["status"] == "skip"


@pytest.mark.engine
@pytest.mark.parametrize("dockerfile", [True, False])
def test_missing_image_fails_and_skips_the_container_checks(
    dockerfile: bool, run_cli: RunCli, engine_repo: Path, engine_image: str
) -> None:
    if dockerfile:  # one this podman builds: no heredocs
        (engine_repo / "docker" / "Dockerfile.ci.dev").write_text(
            f"ARG FROM_IMAGE_NAME={engine_image}\nFROM ${{FROM_IMAGE_NAME}} AS main\n"
        )
    result = run_cli(
        "--repo",
        engine_repo,
        "--engine",
        "podman",
        "--image",
        "localhost/uvdock-no-such:1",
        "doctor",
    )
    assert result.code == 1
    lines = [re.sub(r" \(\d+\.\d s\)$", "", line) for line in result.out.splitlines()]
    assert (
        "[FAIL] image or container: image localhost/uvdock-no-such:1 is not present in podman"
        in lines
    )
    # No `gitlab` remote here: a pull is not offered, it could not work; nor a build
    # without a Dockerfile to build.
    fix = next(line for line in lines if line.startswith("       fix: "))
    if dockerfile:
        assert fix == (
            "       fix: uvdock image build, or name one with --image "
            "(docs/contributing-from-a-fork.md)"
        )
    else:
        assert fix.startswith("       fix: an image of your own that holds uv, the venv")
        assert fix.endswith("(no build here: no docker/Dockerfile.ci.dev in this repository)")
    for name in ("repository mount", "uv in the container", "venv", "uv.lock current"):
        assert f"[skip] {name}: skipped: image or container failed" in lines


@pytest.fixture
def foreign_container(engine_image: str, tmp_path: Path) -> Iterator[str]:
    other = tmp_path / "other-checkout"
    other.mkdir()
    name = engine_name("doctor")
    start_container(engine_image, other, name)
    yield name
    remove_container(name)


@pytest.mark.engine
def test_container_mounting_another_checkout_fails(
    run_cli: RunCli, engine_repo: Path, foreign_container: str
) -> None:
    result = run_cli(
        "--repo",
        engine_repo,
        "--engine",
        "podman",
        "--container",
        foreign_container,
        "--json",
        "doctor",
    )
    assert result.code == 1
    checks = {c["name"]: c for c in json.loads(result.out)["checks"]}
    assert checks["image or container"]["ok"] is True
    assert checks["repository mount"]["ok"] is False
    assert "not this repository" in checks["repository mount"]["detail"]
    assert checks["uv in the container"]["status"] == "skip"


@pytest.fixture
def own_container(engine_image: str, engine_repo: Path) -> Iterator[str]:
    name = engine_name("doctor")
    start_container(engine_image, engine_repo, name)
    yield name
    remove_container(name)


@pytest.mark.engine
def test_container_states(run_cli: RunCli, engine_repo: Path, own_container: str) -> None:
    # Running, stopped and missing all come from the one container inspect the shim uses.
    def image_check(name: str) -> dict[str, object]:
        args = ("--repo", engine_repo, "--engine", "podman", "--container", name, "--json")
        checks = json.loads(run_cli(*args, "doctor").out)["checks"]
        found: dict[str, object] = {c["name"]: c for c in checks}["image or container"]
        return found

    running = image_check(own_container)
    assert (running["status"], running["detail"]) == (
        "pass",
        f"container {own_container} is running",
    )
    subprocess.run(["podman", "stop", "-t", "0", own_container], check=True, capture_output=True)
    stopped = image_check(own_container)
    assert (stopped["status"], stopped["detail"], stopped["fix"]) == (
        "fail",
        f"container {own_container} is not running",
        f"podman start {own_container}",
    )
    missing = image_check("uvdock-no-such-ctr")
    assert (missing["status"], missing["detail"]) == (
        "fail",
        "no container named uvdock-no-such-ctr",
    )


def test_a_module_megatron_declares_gets_a_sync(run_cli: RunCli, megatron_repo: Path) -> None:
    # A real traceback from the CI image (python3 -c "import einops"), read in Megatron-LM,
    # which declares einops in its `dev` extra: the fix is a sync, not `uvdock add`.
    log = CORPUS / "module-not-found-einops.log"
    result = run_cli("--repo", megatron_repo, "doctor", log)
    assert result.code == 0, result.err
    assert "run:     uvdock sync --extra dev" in result.out
    assert "uvdock add" not in result.out


def test_a_module_outside_any_project_still_gets_add(run_cli: RunCli, tmp_path: Path) -> None:
    result = run_cli("--repo", tmp_path, "doctor", CORPUS / "module-not-found-einops.log")
    assert result.code == 0, result.err
    assert "run:     uvdock add einops" in result.out


def test_tls_interception_names_the_ca_mount(run_cli: RunCli) -> None:
    result = run_cli("doctor", CORPUS / "tls-unknown-issuer-uv.log")
    assert result.code == 0, result.err
    assert "TLS interception" in result.out and "SSL_CERT_FILE" in result.out
    assert "-v /path/to/corp-ca.pem:/etc/ssl/certs/corp.pem:ro" in result.out


@pytest.mark.engine
def test_the_ci_image_of_another_repository_is_derived_and_doctor_says_why(
    run_cli: RunCli, make_repo: Callable[..., Path], engine_image: str
) -> None:
    """Issue 28: not `megatron-lm:local` for every repository; doctor names the image and why."""
    from samples import family

    repo = make_repo(family.BASE_IMAGE_ARG, name="trainer")
    result = run_cli("--repo", repo, "--engine", "podman", "doctor")
    assert result.code == 1
    said = (
        "[FAIL] image or container: image trainer:local is not present in podman"
        " (derived: the repository folder's name, built from docker/Dockerfile.ci)"
    )
    assert any(line.startswith(said + " (") for line in result.out.splitlines()), result.out
