"""Base-image pin files and GitLab build matrices as the pin tests and the image commands' tests write them.

The builders write the variants the tests need (keys reordered, quoting, comments,
4-space indentation, CRLF, a missing row).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

DEV = "nvcr.io/nvidia/pytorch:26.06-py3"
LTS = "nvcr.io/nvidia/pytorch:25.09-py3"

Row = list[tuple[str, str]]


def dev_row(platform: str, image: str = DEV) -> Row:
    return [
        ("IMAGE", "CI_MCORE_DEV_IMAGE"),
        ("FILE", "Dockerfile.ci.dev"),
        ("IMAGE_TYPE", "dev"),
        ("BASE_IMAGE", image),
        ("PLATFORM", platform),
    ]


def lts_row(platform: str, image: str = LTS) -> Row:
    return [
        ("IMAGE", "CI_MCORE_LTS_IMAGE"),
        ("FILE", "Dockerfile.ci.lts"),
        ("BASE_IMAGE", image),
        ("PLATFORM", platform),
    ]


def utility_row(platform: str) -> Row:
    return [
        ("IMAGE", "UTILITY_IMAGE"),
        ("FILE", "Dockerfile.linting"),
        ("BASE_IMAGE", "python:3.10"),
        ("PLATFORM", platform),
    ]


def standard_rows() -> list[Row]:
    return [lts_row("amd64"), lts_row("arm64"), dev_row("amd64"), dev_row("arm64"),
            utility_row("amd64"), utility_row("arm64")]  # fmt: skip


def build_yml(
    rows: Sequence[Row],
    *,
    indent: int = 6,
    step: int = 2,
    quotes: Sequence[str] = ("",),
    comments: bool = False,
    eol: str = "\n",
) -> str:
    """A GitLab build file whose matrix holds `rows`; quotes cycle over the values."""
    lines = [
        "test:pre_build_image:",
        "  extends: [.build_image]",
        "  parallel:",
        "    matrix:",
    ]
    count = 0
    for row in rows:
        for position, (key, value) in enumerate(row):
            quote = quotes[count % len(quotes)]
            count += 1
            lead = " " * indent + "-" + " " * (step - 1) if position == 0 else " " * (indent + step)
            line = f"{lead}{key}: {quote}{value}{quote}"
            if comments and key == "BASE_IMAGE":
                line += "  # keep in sync with docker/.ngc_version.*"
            lines.append(line)
            if comments and position == 1:
                lines.append(" " * (indent + step) + "# a comment between keys")
    lines += [
        "",
        "test:build_nemo_image:",
        "  variables:",
        "    FILE: Dockerfile.ci.nemo",
        "    BASE_IMAGE: nvcr.io/nvidian/nemo:nightly",
        "",
    ]
    return eol.join(lines)


def pin_files(
    yml: str | bytes | None = None,
    *,
    dev_pin: str = DEV + "\n",
    lts_pin: str = LTS,
    dev_dockerfile: str = f"# syntax=docker/dockerfile:1.3-labs\n\nARG FROM_IMAGE_NAME={DEV}\n"
    "FROM ${FROM_IMAGE_NAME} AS main\n",
    lts_dockerfile: str = "ARG FROM_IMAGE_NAME\nFROM ${FROM_IMAGE_NAME} as main\n",
) -> dict[str, str | bytes]:
    return {
        "docker/.ngc_version.dev": dev_pin,
        "docker/.ngc_version.lts": lts_pin,
        "docker/Dockerfile.ci.dev": dev_dockerfile,
        "docker/Dockerfile.ci.lts": lts_dockerfile,
        ".gitlab/stages/01.build.yml": build_yml(standard_rows()) if yml is None else yml,
    }


# The files a bump manages in the Megatron-LM layout, and their bytes.
MANAGED = (
    "docker/.ngc_version.dev",
    "docker/.ngc_version.lts",
    "docker/Dockerfile.ci.dev",
    "docker/Dockerfile.ci.lts",
    ".gitlab/stages/01.build.yml",
)


def snapshot(repo: Path) -> dict[str, bytes]:
    return {rel: (repo / rel).read_bytes() for rel in MANAGED if (repo / rel).exists()}
