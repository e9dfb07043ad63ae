"""`uvdock image build` refuses (exit 3) before building when the engine here cannot parse
the Dockerfile's heredocs, and the real engine's failure is what `uvdock doctor` names.

Against the real podman of this machine (Debian 12's 4.3.1, buildah 1.28.2) and the real
docker CLI on its socket. On a podman whose buildah parses heredocs the refusal tests skip.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import RunCli, engine_name, git

from uvdock.doctor import logscan
from uvdock.image.heredoc import BUILDAH_FIRST

pytestmark = pytest.mark.engine

DOCKERFILE = """\
ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3
FROM ${FROM_IMAGE_NAME} AS main
RUN bash -ex <<"EOF"
    apt-get --version
    echo main > /marker
EOF
"""


def _buildah_version() -> tuple[int, int]:
    out = subprocess.run(
        ["podman", "info", "--format", "{{.Host.BuildahVersion}}"],
        capture_output=True,
        text=True,
        check=True,
    )
    major, minor = out.stdout.strip().split(".")[:2]
    return int(major), int(minor)


@pytest.fixture
def old_buildah(engine_image: str) -> str:
    if _buildah_version() >= BUILDAH_FIRST:
        pytest.skip("this podman's buildah parses heredocs: nothing to refuse")
    return engine_image


@pytest.fixture
def heredoc_repo(make_repo: Callable[..., Path], old_buildah: str) -> Path:
    return make_repo(
        {"docker/Dockerfile.ci.dev": DOCKERFILE, "docker/.ngc_version.dev": old_buildah + "\n"}
    )


@pytest.fixture
def tag() -> Iterator[str]:
    name = f"localhost/{engine_name('heredoc-test')}:latest"
    yield name
    subprocess.run(["podman", "rmi", "-f", name], capture_output=True, check=False)


def _exists(tag: str) -> bool:
    # Only this test's own tag: other test runs share podman's store, so a global image
    # count would see theirs.
    return subprocess.run(["podman", "image", "exists", tag], check=False).returncode == 0


def test_podman_refuses_before_building(run_cli: RunCli, heredoc_repo: Path, tag: str) -> None:
    result = run_cli("--repo", heredoc_repo, "--engine", "podman", "image", "build", "--tag", tag)
    assert result.code == 3, result.out + result.err
    version = subprocess.run(
        ["podman", "--version"], capture_output=True, text=True
    ).stdout.split()[-1]
    assert f"podman {version} (buildah " in result.err
    assert "docker/Dockerfile.ci.dev uses heredocs" in result.err and "line 3" in result.err
    assert "podman 5 or later" in result.err and "BuildKit" in result.err
    assert "building" not in result.out  # refused before the build started
    assert not _exists(tag)


def test_docker_cli_on_podman_refuses_too(
    run_cli: RunCli,
    heredoc_repo: Path,
    tag: str,
    docker_host: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", docker_host)
    result = run_cli("--repo", heredoc_repo, "--engine", "docker", "image", "build", "--tag", tag)
    assert result.code == 3, result.out + result.err
    assert "behind the docker CLI" in result.err


def test_the_real_build_fails_as_doctor_says(
    heredoc_repo: Path, old_buildah: str, tag: str
) -> None:
    # The control: without the check the engine really fails, minutes in on Megatron-LM,
    # and `uvdock doctor` names the cause from its own output.
    argv = ["podman", "build", "--layers=false", "--force-rm", "--build-arg"]
    argv += [f"FROM_IMAGE_NAME={old_buildah}", "-f", "docker/Dockerfile.ci.dev", "-t", tag, "."]
    out = subprocess.run(argv, cwd=heredoc_repo, capture_output=True, text=True, check=False)
    assert out.returncode != 0
    log = out.stdout + out.stderr
    assert 'Unknown instruction: "APT-GET"' in log
    found = [f.signature for f in logscan.diagnose(log).findings]
    assert "heredoc-unsupported" in found
    assert not _exists(tag)


@pytest.mark.parametrize("gitlab", [False, True])
def test_doctor_does_not_advise_a_build_this_engine_cannot_do(
    gitlab: bool, heredoc_repo: Path, run_cli: RunCli
) -> None:
    # The image is missing; `uvdock image build` would refuse (exit 3), and `image pull`
    # needs the `gitlab` remote: the fix offers only what works here, and says why.
    if gitlab:
        git(heredoc_repo, "remote", "add", "gitlab", "https://gitlab.example.com/a/b.git")
    missing = f"localhost/{engine_name('no-such')}:1"
    result = run_cli("--repo", heredoc_repo, "--engine", "podman", "--image", missing, "doctor")
    assert result.code == 1, result.out
    fix = next(line for line in result.out.splitlines() if line.startswith("       fix: "))
    assert ("uvdock image pull" in fix) is gitlab
    assert "uvdock image build" not in fix
    assert "no build here:" in fix and "cannot parse" in fix
    if not gitlab:
        assert "an image of your own that holds uv, the venv (/opt/venv)" in fix


def test_dry_run_refuses_as_the_build_does(run_cli: RunCli, heredoc_repo: Path, tag: str) -> None:
    result = run_cli(
        "--repo", heredoc_repo, "--dry-run", "--engine", "podman", "image", "build", "--tag", tag
    )
    assert result.code == 3, result.out + result.err
    assert "docker/Dockerfile.ci.dev uses heredocs" in result.err
    assert "podman build" not in result.out  # no build printed that the real run refuses
