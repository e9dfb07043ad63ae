"""A real `uvdock image build` with podman, and with the docker CLI on podman's socket.

The Dockerfile has the shape of Megatron-LM's: a `main` stage, then a `jet` stage whose
RUN needs a build secret nobody outside NVIDIA has. The build must stop at `main`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import RunCli, engine_name

pytestmark = pytest.mark.engine

# (The IMAGE_TYPE build arg cannot be observed here: the test image sets ENV IMAGE_TYPE,
# and an ENV wins over an ARG. The argv tests cover it.)
DOCKERFILE = """\
ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3
FROM ${FROM_IMAGE_NAME} AS main
RUN echo "main LANE" > /marker

FROM main AS jet
RUN --mount=type=secret,id=JET_INDEX_URLS cat /run/secrets/JET_INDEX_URLS
"""


@pytest.fixture
def build_repo(make_repo: Callable[..., Path], engine_image: str) -> Path:
    return make_repo(
        {
            "docker/Dockerfile.ci.dev": DOCKERFILE.replace("LANE", "dev"),
            "docker/Dockerfile.ci.lts": DOCKERFILE.replace("LANE", "lts"),
            "docker/.ngc_version.dev": engine_image + "\n",
            "docker/.ngc_version.lts": engine_image,
        }
    )


@pytest.fixture
def tag() -> Iterator[str]:
    name = f"{engine_name('build-test')}:latest"
    yield name
    for ref in (name, f"localhost/{name}", f"docker.io/library/{name}"):
        subprocess.run(["podman", "rmi", "-f", ref], capture_output=True, check=False)


def _marker(cli: list[str], tag: str) -> str:
    out = subprocess.run(
        [*cli, "run", "--rm", tag, "cat", "/marker"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_podman_build_stops_at_main(run_cli: RunCli, build_repo: Path, tag: str) -> None:
    result = run_cli("--repo", build_repo, "--engine", "podman", "image", "build", "--tag", tag)
    assert result.code == 0, result.err
    assert f"built {tag}" in result.out
    assert subprocess.run(["podman", "image", "exists", tag], check=False).returncode == 0
    assert _marker(["podman"], tag) == "main dev"
    # FROM came from the pin file: the test image's uv is there.
    probe = subprocess.run(
        ["podman", "run", "--rm", tag, "uv", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.stdout.startswith("uv ")


def test_podman_lts_build_uses_the_lts_dockerfile(
    run_cli: RunCli, build_repo: Path, tag: str
) -> None:
    result = run_cli(
        "--repo", build_repo, "--engine", "podman", "image", "build", "--lts", "--tag", tag
    )
    assert result.code == 0, result.err
    assert _marker(["podman"], tag) == "main lts"


def test_docker_cli_on_podman_socket(
    run_cli: RunCli, build_repo: Path, tag: str, docker_host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", docker_host)
    result = run_cli("--repo", build_repo, "--engine", "docker", "image", "build", "--tag", tag)
    assert result.code == 0, result.err
    docker = ["docker", "-H", docker_host]
    inspect = subprocess.run([*docker, "image", "inspect", tag], capture_output=True, check=False)
    assert inspect.returncode == 0
    assert _marker(docker, tag) == "main dev"


def test_without_target_the_jet_stage_fails(build_repo: Path, engine_image: str, tag: str) -> None:
    # The control: building every stage really does need the secret.
    argv = [
        "podman",
        "build",
        "--layers=false",
        "--build-arg",
        f"FROM_IMAGE_NAME={engine_image}",
        "-f",
        "docker/Dockerfile.ci.dev",
        "-t",
        tag,
        ".",
    ]
    out = subprocess.run(argv, cwd=build_repo, capture_output=True, text=True, check=False)
    assert out.returncode != 0
    assert "/run/secrets/JET_INDEX_URLS: No such file or directory" in out.stdout + out.stderr
