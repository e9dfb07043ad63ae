"""A repository holding both CI Dockerfiles and their pin files, and the build line uvdock
must run on it: written once for the argv unit tests and the `image build` command tests."""

from __future__ import annotations

from samples.pins import DEV, LTS

BUILD_FILES: dict[str, str | bytes] = {
    "docker/.ngc_version.dev": DEV + "\n",
    "docker/.ngc_version.lts": LTS,  # no final newline, as in Megatron-LM
    "docker/Dockerfile.ci.dev": "ARG FROM_IMAGE_NAME\nFROM ${FROM_IMAGE_NAME} AS main\n",
    "docker/Dockerfile.ci.lts": "ARG FROM_IMAGE_NAME\nFROM ${FROM_IMAGE_NAME} AS main\n",
}


def expected_build_argv(engine: str, *, lts: bool) -> list[str]:
    """The build line for BUILD_FILES: stops at `main`; only dev passes IMAGE_TYPE."""
    lane = "lts" if lts else "dev"
    image_type = [] if lts else ["--build-arg", "IMAGE_TYPE=dev"]
    return [
        engine,
        "build",
        "--target",
        "main",
        "--build-arg",
        f"FROM_IMAGE_NAME={LTS if lts else DEV}",
        *image_type,
        "-f",
        f"docker/Dockerfile.ci.{lane}",
        "-t",
        "megatron-lm:local-lts" if lts else "megatron-lm:local",
        ".",
    ]
