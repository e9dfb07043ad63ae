"""imagebuild: the build spec read from a repository; build / pull / tag / enroot argv."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from samples.image_build import BUILD_FILES, expected_build_argv
from samples.pins import LTS

from uvdock.config.settings import Config
from uvdock.errors import EnvironmentUnusable
from uvdock.image import build as imagebuild


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(BUILD_FILES)


@pytest.mark.parametrize("lts", [False, True], ids=["dev", "lts"])
@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_build_argv(repo: Path, engine: str, lts: bool) -> None:
    spec = imagebuild.build_spec(repo, Config(), lts=lts)
    assert spec.lane == ("lts" if lts else "dev")
    assert imagebuild.build_argv(engine, spec) == expected_build_argv(engine, lts=lts)


def test_tag_and_config_override(repo: Path) -> None:
    config = Config(build_target="public", image="mine:dev")
    assert imagebuild.build_spec(repo, config, lts=False).tag == "mine:dev"
    spec = imagebuild.build_spec(repo, config, lts=False, tag="other:1")
    argv = imagebuild.build_argv("docker", spec)
    assert argv[2:4] == ["--target", "public"]
    assert argv[-3:] == ["-t", "other:1", "."]


def test_missing_pin_file_is_environment_unusable(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"docker/Dockerfile.ci.dev": "FROM x AS main\n"})
    with pytest.raises(EnvironmentUnusable, match=r"docker/\.ngc_version\.dev"):
        imagebuild.build_spec(repo, Config(), lts=False)


@pytest.mark.parametrize("content", ["", "\n", "a b\n"])
def test_pin_file_must_hold_one_reference(make_repo: Callable[..., Path], content: str) -> None:
    repo = make_repo({**BUILD_FILES, "docker/.ngc_version.dev": content})
    with pytest.raises(EnvironmentUnusable, match="one image reference"):
        imagebuild.build_spec(repo, Config(), lts=False)


def test_missing_dockerfile(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"docker/.ngc_version.lts": LTS})
    with pytest.raises(EnvironmentUnusable, match=r"docker/Dockerfile\.ci\.lts"):
        imagebuild.build_spec(repo, Config(), lts=True)


def test_pull_tag_enroot_argv() -> None:
    assert imagebuild.pull_argv("podman", "h/x:main") == ["podman", "pull", "h/x:main"]
    assert imagebuild.tag_argv("docker", "h/x:main", "megatron-lm:local") == [
        "docker",
        "tag",
        "h/x:main",
        "megatron-lm:local",
    ]
    assert imagebuild.enroot_argv("megatron-lm.sqsh", "megatron-lm:local") == [
        "enroot",
        "import",
        "-o",
        "megatron-lm.sqsh",
        "dockerd://megatron-lm:local",
    ]
    assert (
        imagebuild.enroot_argv("o.sqsh", "megatron-lm:local", "podman")[-1]
        == "podman://megatron-lm:local"
    )
