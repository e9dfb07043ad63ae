"""Issue 28: the CI image settings of a repository not laid out like Megatron-LM come from it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from samples import family

from uvdock.config.derived import derive
from uvdock.config.settings import Layers
from uvdock.config.settings import load_layers as _load


def load_layers(repo: Path, env: dict[str, str]) -> Layers:
    return derive(repo, _load(repo, env))


def test_a_family_repository_gets_its_own_dockerfile_target_and_image(
    make_repo: Callable[..., Path],
) -> None:
    layers = load_layers(make_repo(family.BASE_IMAGE_ARG, name="Trainer Repo"), {})
    config = layers.config
    assert (config.dockerfile, config.build_target) == ("docker/Dockerfile.ci", "ci")
    assert (config.image, config.lts_image) == ("trainer-repo:local", "trainer-repo:local-lts")
    assert layers.origins["image"].startswith("derived:")


def test_what_anyone_set_and_megatron_lm_keep_their_values(
    make_repo: Callable[..., Path], megatron_repo: Path
) -> None:
    set_image = {**family.BASE_IMAGE_ARG, "uvdock.toml": 'image = "mine:1"\n'}
    assert load_layers(make_repo(set_image), {}).config.image == "mine:1"
    megatron = load_layers(megatron_repo, {})
    assert megatron.config.image == "megatron-lm:local" and "image" not in megatron.origins
    bare = load_layers(make_repo({"README.md": "no Dockerfile\n"}), {})
    assert bare.config.dockerfile == "docker/Dockerfile.ci.dev"
