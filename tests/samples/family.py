"""Repositories of the Megatron-LM family that are not Megatron-LM (issue 28): other file
names, other ARG names, other NVIDIA images and tag schemes. Written from the issue's
descriptions; each is a dict of path -> text for the make_repo fixture."""

from __future__ import annotations

PYTORCH = "nvcr.io/nvidia/pytorch:26.06-py3"
CUDA_DL = "nvcr.io/nvidia/cuda-dl-base:26.05-cuda13.0-devel-ubuntu24.04"
VLLM = "nvcr.io/nvidia/vllm:26.04-py3"
HUB_CUDA = "nvidia/cuda:12.8.0-devel-ubuntu22.04"

# docker/Dockerfile.ci with ARG BASE_IMAGE, built by a GitHub workflow (a run step and a
# build-push-action step), no pin file, no GitLab matrix.
BASE_IMAGE_ARG = {
    "docker/Dockerfile.ci": f"""\
# syntax=docker/dockerfile:1
ARG BASE_IMAGE={PYTORCH}
FROM ${{BASE_IMAGE}} AS base
RUN pip install uv
FROM base AS ci
COPY . /workspace
""",
    ".github/workflows/ci.yml": f"""\
name: ci
on: [push]
jobs:
  image:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: build
        run: |
          docker build -f docker/Dockerfile.ci \\
            --build-arg BASE_IMAGE={PYTORCH} \\
            --target ci -t train:ci .
      - uses: docker/build-push-action@v6
        with:
          context: .
          file: ./docker/Dockerfile.ci
          target: ci
          build-args: |
            BASE_IMAGE={PYTORCH}
""",
}

# One Dockerfile, two bases: CI builds the `train` target, so PYTORCH_IMAGE is the base;
# CUDA_IMAGE feeds a stage no built target starts from.
TWO_BASES = {
    "docker/Dockerfile": f"""\
ARG PYTORCH_IMAGE={PYTORCH}
ARG CUDA_IMAGE={CUDA_DL}
FROM ${{CUDA_IMAGE}} AS kernels
RUN make -C /src
FROM $PYTORCH_IMAGE AS deps
RUN pip install uv
FROM deps AS train
COPY --from=kernels /out /opt/kernels
""",
    ".gitlab-ci.yml": f"""\
variables:
  PYTORCH_IMAGE: "{PYTORCH}"
build:
  stage: build
  script:
    - docker build --target train -f docker/Dockerfile
      --build-arg PYTORCH_IMAGE=$PYTORCH_IMAGE -t train .
""",
}

# Bases beyond nvidia/pytorch: cuda-dl-base in an ARG, vllm and Docker Hub's nvidia/cuda
# written in FROM, and an image uvdock cannot order (listed with why).
OTHER_IMAGES = {
    "docker/cuda.Dockerfile": f"ARG BASE_IMAGE={CUDA_DL}\nFROM ${{BASE_IMAGE}}\nRUN true\n",
    "serve/Dockerfile.vllm": f"FROM {VLLM} AS serve\nRUN true\n",
    "Dockerfile": f"FROM {HUB_CUDA}\nRUN true\n",
    "tools/Dockerfile.lint": "FROM python:3.12-slim\nRUN pip install ruff\n",
}

# The base moved 25.11 -> 26.06 and the ARG was renamed; the workflow still passes the
# old FROM_IMAGE_NAME, which the Dockerfile no longer declares.
DEAD_BUILD_ARG = {
    "docker/Dockerfile.ci": f"ARG BASE_IMAGE={PYTORCH}\nFROM ${{BASE_IMAGE}} AS main\nRUN true\n",
    ".github/workflows/deps.yml": """\
name: deps
on: [workflow_dispatch]
jobs:
  lock:
    runs-on: ubuntu-latest
    steps:
      - run: |
          docker build -f docker/Dockerfile.ci \\
            --build-arg FROM_IMAGE_NAME="nvcr.io/nvidia/pytorch:25.09-py3" \\
            --target=main -t deps .
""",
}
# What the README told this repository to configure before uvdock found bases alone.
README_CONFIG = 'dockerfile = "docker/Dockerfile.ci"\ndev-pin-file = ""\nlts-pin-file = ""\n'

# The base read from a pin file by a GitLab job, and from a workflow's `env:` by a build action.
PIN_FILE_AND_ENV = {
    "docker/base-image.txt": f"{PYTORCH}\n",
    "docker/Dockerfile.train": f"ARG BASE_IMAGE={PYTORCH}\nFROM ${{BASE_IMAGE}}\nRUN true\n",
    ".gitlab-ci.yml": """\
build:
  script:
    - docker build -f docker/Dockerfile.train --build-arg BASE_IMAGE=$(cat docker/base-image.txt) .
""",
    ".github/workflows/image.yml": f"""\
on: [push]
env:
  BASE_IMAGE: {PYTORCH}
jobs:
  image:
    runs-on: ubuntu-latest
    steps:
      - uses: docker/build-push-action@v6
        with:
          file: docker/Dockerfile.train
          build-args: |
            BASE_IMAGE=${{{{ env.BASE_IMAGE }}}}
""",
}

# Megatron-LM's ARG name in another file: docker/Dockerfile.ci with FROM_IMAGE_NAME, no pin files.
FROM_IMAGE_NAME_ELSEWHERE = {
    "docker/Dockerfile.ci": f"ARG FROM_IMAGE_NAME={PYTORCH}\nFROM ${{FROM_IMAGE_NAME}} AS main\n",
}
