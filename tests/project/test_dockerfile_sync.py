"""The selection a lane's Dockerfile syncs into the image, read from its `uv sync` lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from uvdock.project.syncplan import read_selection

EXAMPLES = Path(__file__).resolve().parents[2] / "examples/megatron-lm/docker"


def test_real_dev_dockerfile_dev_lane() -> None:
    text = (EXAMPLES / "Dockerfile.ci.dev").read_text()
    selection = read_selection(text, image_type="dev")
    assert selection.found and not selection.notes
    assert selection.extras == ("dev", "mlm", "ssm", "te")
    # FLASH_MLA_GROUP is set inside `if [ "$IMAGE_TYPE" != "lts" ]`.
    assert selection.groups == ("no_pypi_wheels",)


def test_real_dev_dockerfile_built_as_lts_skips_the_conditional_group() -> None:
    text = (EXAMPLES / "Dockerfile.ci.dev").read_text()
    selection = read_selection(text, image_type="lts")
    assert selection.extras == ("lts", "mlm", "ssm", "te")
    assert selection.groups == ()


def test_real_lts_dockerfile() -> None:
    selection = read_selection((EXAMPLES / "Dockerfile.ci.lts").read_text(), image_type="lts")
    assert selection.found
    assert selection.extras == ("mlm", "ssm") and selection.groups == ()


ARCH = """\
ARG FROM_IMAGE_NAME
FROM ${FROM_IMAGE_NAME} AS main
ARG TARGETARCH
RUN bash -ex <<"EOF"
    uv sync --only-group build
    EXTRA_GROUPS=""
    if [ "$(uname -m)" = "aarch64" ]; then
        EXTRA_GROUPS="--group no_pypi_wheels"
    fi
    if [ "${TARGETARCH}" == "amd64" ]; then
        EXTRA_GROUPS="$EXTRA_GROUPS --group x86_only"
    fi
    if [ "$SOMETHING_ELSE" = "1" ]; then
        EXTRA_GROUPS="$EXTRA_GROUPS --group unknowable"
    fi
    uv sync --extra=dev ${EXTRA_GROUPS} --locked \\
        --no-install-package torch
EOF
"""


@pytest.mark.parametrize(
    ("platform", "groups"),
    [("arm64", ("no_pypi_wheels",)), ("amd64", ("x86_only",))],
)
def test_arch_conditions_are_taken_for_the_platform(platform: str, groups: tuple[str]) -> None:
    selection = read_selection(ARCH, image_type="dev", platform=platform)
    assert selection.extras == ("dev",)
    assert selection.groups == groups
    # A test it cannot evaluate is not taken, and named.
    assert any("SOMETHING_ELSE" in note for note in selection.notes)


def test_else_branch_and_one_line_ifs() -> None:
    text = (
        "FROM x AS main\n"
        "ARG IMAGE_TYPE=dev\n"
        'RUN if [ "$IMAGE_TYPE" = "lts" ]; then G=""; else G="--group extra_tools"; fi && \\\n'
        "    uv sync --extra ${IMAGE_TYPE} $G --locked\n"
    )
    assert read_selection(text, image_type="dev").groups == ("extra_tools",)
    assert read_selection(text, image_type="lts").groups == ()
    assert read_selection(text, image_type="lts").extras == ("lts",)


def test_no_project_sync_line() -> None:
    text = "FROM x AS main\nRUN uv sync --only-group build\nRUN uv pip install einops\n"
    assert not read_selection(text, image_type="dev").found


ELIF = """\
FROM x AS main
ARG IMAGE_TYPE=dev
RUN if [ "$IMAGE_TYPE" = "dev" ]; then \\
        G="--group dev_tools"; \\
    elif [ "$IMAGE_TYPE" = "lts" ]; then \\
        G="--group lts_tools"; \\
    else \\
        G="--group other_tools"; \\
    fi && \\
    uv sync --extra mlm $G --locked
"""


@pytest.mark.parametrize(
    ("image_type", "group"),
    [("dev", "dev_tools"), ("lts", "lts_tools"), ("nightly", "other_tools")],
)
def test_if_elif_else_takes_exactly_one_branch(image_type: str, group: str) -> None:
    selection = read_selection(ELIF, image_type=image_type)
    assert selection.groups == (group,)
    assert not selection.notes
