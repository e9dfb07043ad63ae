"""image.heredoc: finding `RUN <<EOF` in a Dockerfile, and which builders parse it."""

from __future__ import annotations

from pathlib import Path

import pytest

from uvdock.image.heredoc import Builder, first_heredoc, verdict

MEGATRON_DOCKER = Path(__file__).parents[2] / "examples" / "megatron-lm" / "docker"


def test_megatron_lm_dockerfiles_use_heredocs() -> None:
    dev = (MEGATRON_DOCKER / "Dockerfile.ci.dev").read_text()
    lts = (MEGATRON_DOCKER / "Dockerfile.ci.lts").read_text()
    assert first_heredoc(dev) == 20  # RUN bash -ex <<"EOF"
    assert first_heredoc(lts) == 26


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("FROM x\nRUN echo hi\n", None),
        ("FROM x\n# RUN <<EOF in a comment\nRUN echo <not a heredoc>\n", None),
        ("FROM x\nENV A=1\nRUN echo 'a << b'\n", None),
        ("FROM x\nRUN <<EOF\necho\nEOF\n", 2),
        ("FROM x\nRUN --mount=type=cache,target=/c \\\n    bash -ex <<'EOS'\nls\nEOS\n", 2),
        ("FROM x\ncopy <<-END /etc/x\nhello\nEND\n", 2),
        ("FROM x\nLABEL a=b \\\n  c=<<EOF\n", None),
    ],
)
def test_first_heredoc(text: str, line: int | None) -> None:
    assert first_heredoc(text) == line


@pytest.mark.parametrize(
    ("builder", "refuse"),
    [
        (Builder("podman", "4.3.1", buildah="1.28.2"), True),
        (Builder("podman", "4.9.3", buildah="1.33.7"), False),  # warned: distro packages fail
        (Builder("podman", "5.4.2", buildah="1.39.4"), None),
        (Builder("podman", "", buildah=""), None),  # unknown: let the build speak
        (Builder("docker", "28.2.2", podman_server="4.3.1"), True),
        (Builder("docker", "28.2.2", podman_server="4.9.3"), False),
        (Builder("docker", "28.2.2", podman_server="5.0.0"), None),
        (Builder("docker", "28.2.2", buildkit=False, buildkit_why="DOCKER_BUILDKIT=0"), True),
        (Builder("docker", "28.2.2"), None),
    ],
)
def test_verdict(builder: Builder, refuse: bool | None) -> None:
    found = verdict(builder, "docker/Dockerfile.ci.dev", 20)
    if refuse is None:
        assert found is None
        return
    assert found is not None and found.refuse is refuse
    assert "docker/Dockerfile.ci.dev" in found.message and "line 20" in found.message
    assert (builder.buildah or builder.podman_server or builder.version) in found.message
