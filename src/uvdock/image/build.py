"""How the CI image is acquired: pure argv builders for build, pull, tag and enroot import.

`build_spec` reads the lane's pin file (the only file it touches); everything else is data
in, argv out. The build always stops at the configured target (`main`): the `jet` stage
after it needs an internal secret and fails everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import EnvironmentUnusable
from uvdock.files import textlines

if TYPE_CHECKING:
    from uvdock.config.settings import Config


@dataclass(frozen=True)
class BuildSpec:
    lane: str  # "dev" or "lts"
    dockerfile: str  # relative to the repository root
    pin_file: str
    base_image: str  # the pin file's content, stripped
    tag: str
    target: str
    build_args: tuple[tuple[str, str], ...]


def read_pin(repo: Path, pin_file: str) -> str:
    """The base image a lane's pin file names (exit 3 when it is missing or empty)."""
    path = repo / pin_file
    try:
        value = textlines.read_text(path, newlines=True).strip()
    except FileNotFoundError:
        raise EnvironmentUnusable(
            f"{pin_file}: no base-image pin file here",
            hint="set dev-pin-file / lts-pin-file in [tool.uvdock] if it lives elsewhere",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvironmentUnusable(f"{pin_file}: cannot read it ({exc})") from exc
    if not value or len(value.split()) != 1:
        raise EnvironmentUnusable(f"{pin_file}: expected one image reference, found {value!r}")
    return value


def build_spec(repo: Path, config: Config, *, lts: bool, tag: str | None = None) -> BuildSpec:
    """What `image build` builds: the dev lane unless the caller opted into LTS."""
    if lts:
        pin_file, dockerfile, default_tag = (
            config.lts_pin_file,
            config.lts_dockerfile,
            config.lts_image,
        )
    else:
        pin_file, dockerfile, default_tag = config.dev_pin_file, config.dockerfile, config.image
    if not textlines.regular_file(repo / dockerfile):
        raise EnvironmentUnusable(
            f"{dockerfile}: no Dockerfile here",
            hint="set dockerfile / lts-dockerfile in [tool.uvdock] if it lives elsewhere",
        )
    megatron = type(config)._field_defaults["dockerfile"]
    if not lts and dockerfile != megatron and not (repo / pin_file).is_file():
        own = _own_base(repo, dockerfile, config.build_target)
        if own is not None:  # not laid out like Megatron-LM: the Dockerfile names its base
            return BuildSpec("dev", dockerfile, own[1], own[0], tag or default_tag,
                             config.build_target, ())  # fmt: skip
    base = read_pin(repo, pin_file)
    args: list[tuple[str, str]] = [("FROM_IMAGE_NAME", base)]
    if not lts:
        args.append(("IMAGE_TYPE", "dev"))  # the LTS Dockerfile takes no IMAGE_TYPE
    return BuildSpec(
        lane="lts" if lts else "dev",
        dockerfile=dockerfile,
        pin_file=pin_file,
        base_image=base,
        tag=tag or default_tag,
        target=config.build_target,
        build_args=tuple(args),
    )


def _own_base(repo: Path, dockerfile: str, target: str) -> tuple[str, str] | None:
    """(base image, where it is said) when the Dockerfile builds `target` from its own ARG
    default or FROM image (a FROM_IMAGE_NAME default too); None when a value is missing."""
    from uvdock.files.textlines import read_text
    from uvdock.image.dockerfile import base_of, global_args, read, stages

    try:
        parsed = read(read_text(repo / dockerfile))
    except (OSError, UnicodeDecodeError):
        return None
    declared = global_args(parsed)
    stage = base_of(stages(parsed), target or None)
    if stage is None or not stage.image or "$" in stage.image:
        return None
    if stage.variables:
        name = stage.variables[0]
        return stage.image, f"ARG {name} in {dockerfile}:{declared.get(name, (None, 0))[1]}"
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
    """`enroot import` from the local engine's store (`dockerd://`, or `podman://`)."""
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
