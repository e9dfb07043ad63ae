"""How the CI image is acquired: argv builders for build, pull, tag and enroot import. The
build stops at the target (`main`): the `jet` stage after it needs an internal secret."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from uvdock.errors import EnvironmentUnusable
from uvdock.files import textlines

if TYPE_CHECKING:
    from uvdock.config.settings import Config


class BuildSpec(NamedTuple):
    lane: str  # "dev" or "lts"
    dockerfile: str  # relative to the repository root
    pin_file: str
    base_image: str  # the pin file's content, stripped
    tag: str
    target: str
    build_args: tuple[tuple[str, str], ...]


def build_spec(repo: Path, config: Config, *, lts: bool, tag: str | None = None) -> BuildSpec:
    """What `image build` builds; a Dockerfile laid out unlike Megatron-LM's names its own base."""
    lane = "lts" if lts else "dev"
    dockerfile = config.lts_dockerfile if lts else config.dockerfile
    pin_file = config.lts_pin_file if lts else config.dev_pin_file
    tag = tag or (config.lts_image if lts else config.image)
    if not textlines.regular_file(repo / dockerfile):
        raise EnvironmentUnusable(
            f"{dockerfile}: no Dockerfile here",
            hint="set dockerfile / lts-dockerfile in [tool.uvdock] if it lives elsewhere",
        )
    megatron = type(config)._field_defaults["dockerfile"]
    if not lts and dockerfile != megatron and not (repo / pin_file).is_file():
        own = _own_base(repo, dockerfile, config.build_target)
        if own is not None:
            return BuildSpec(lane, dockerfile, own[1], own[0], tag, config.build_target, ())
    try:
        base = textlines.read_text(repo / pin_file, newlines=True).strip()
    except FileNotFoundError:
        raise EnvironmentUnusable(
            f"{pin_file}: no base-image pin file here",
            hint="set dev-pin-file / lts-pin-file in [tool.uvdock] if it lives elsewhere",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvironmentUnusable(f"{pin_file}: cannot read it ({exc})") from exc
    if not base or len(base.split()) != 1:
        raise EnvironmentUnusable(f"{pin_file}: expected one image reference, found {base!r}")
    # The LTS Dockerfile takes no IMAGE_TYPE.
    args = (("FROM_IMAGE_NAME", base),) + (() if lts else (("IMAGE_TYPE", "dev"),))
    return BuildSpec(lane, dockerfile, pin_file, base, tag, config.build_target, args)


def _own_base(repo: Path, dockerfile: str, target: str) -> tuple[str, str] | None:
    """(base image, where it is said) of `target` when the Dockerfile itself names it."""
    from uvdock.image.dockerfile import base_of, global_args, read, stages

    try:
        parsed = read(textlines.read_text(repo / dockerfile))
    except (OSError, UnicodeDecodeError):
        return None
    stage = base_of(stages(parsed), target or None)
    if stage is None or not stage.image or "$" in stage.image:
        return None
    if stage.variables:
        name = stage.variables[0]
        line = global_args(parsed).get(name, (None, 0))[1]
        return stage.image, f"ARG {name} in {dockerfile}:{line}"
    return stage.image, f"FROM in {dockerfile}:{stage.line}"


def build_argv(engine: str, spec: BuildSpec, context: str = ".") -> list[str]:
    argv = [engine, "build", *(("--target", spec.target) if spec.target else ())]
    for key, value in spec.build_args:
        argv += ["--build-arg", f"{key}={value}"]
    return [*argv, "-f", spec.dockerfile, "-t", spec.tag, context]


def pull_argv(engine: str, image: str) -> list[str]:
    return [engine, "pull", image]


def tag_argv(engine: str, source: str, target: str) -> list[str]:
    return [engine, "tag", source, target]


def enroot_argv(output: str, image: str, engine: str = "docker") -> list[str]:
    scheme = "podman" if engine == "podman" else "dockerd"
    return ["enroot", "import", "-o", output, f"{scheme}://{image}"]


# enroot creates a container of the image without a command: an image with neither CMD nor
# ENTRYPOINT is refused ("no command specified"), so it is imported through one with a CMD.
ENROOT_CMD_CONTAINERFILE = 'FROM {image}\nCMD ["/bin/sh"]\n'


def needs_cmd(inspect_json: str) -> bool:
    """Whether `ENGINE image inspect` output shows an image with neither CMD nor ENTRYPOINT."""
    import json

    try:
        config = json.loads(inspect_json)[0].get("Config") or {}
    except (ValueError, IndexError, AttributeError):
        return False
    return not config.get("Cmd") and not config.get("Entrypoint")
