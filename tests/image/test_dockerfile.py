"""image.dockerfile: the one Dockerfile reader, checked against Docker's reference rules."""

from __future__ import annotations

import pytest

from uvdock.image.dockerfile import base_of, expand, global_args, read, stages

TEXT = """\
# escape=`
# a comment: no more directives after it
ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:26.06-py3 `
    OTHER=1
FROM ${BASE_IMAGE} AS base
RUN echo one `
# a comment inside the continuation is dropped

    two
run <<EOF
FROM not-an-instruction
EOF
FROM base AS main
"""


def test_instructions_keep_their_first_line_and_offsets() -> None:
    dockerfile = read(TEXT)
    assert dockerfile.escape == "`"
    assert [(i.keyword, i.line) for i in dockerfile.instructions] == [
        ("ARG", 3), ("FROM", 5), ("RUN", 6), ("RUN", 10), ("FROM", 13),
    ]  # fmt: skip
    run = dockerfile.instructions[2]
    assert run.arguments == "echo one     two"
    assert "".join(TEXT[o] for o in run.offsets) == run.text
    heredoc = dockerfile.instructions[3].heredocs[0]
    assert (heredoc.word, heredoc.line, heredoc.body) == ("EOF", 11, ("FROM not-an-instruction",))


def test_stages_expand_global_args_and_follow_aliases() -> None:
    dockerfile = read(TEXT)
    assert global_args(dockerfile)["BASE_IMAGE"] == ("nvcr.io/nvidia/pytorch:26.06-py3", 3)
    found = stages(dockerfile)
    assert [(s.image, s.alias, s.parent) for s in found] == [
        ("nvcr.io/nvidia/pytorch:26.06-py3", "base", None),
        ("base", "main", 0),
    ]
    assert base_of(found, "main") == found[0] == base_of(found, None)
    assert base_of(found, "nope") is None
    overridden = stages(dockerfile, {"BASE_IMAGE": "nvidia/cuda:12.8.0-devel-ubuntu22.04"})
    assert overridden[0].image == "nvidia/cuda:12.8.0-devel-ubuntu22.04"


@pytest.mark.parametrize(
    ("text", "expanded", "unknown"),
    [
        ("$A/${A}", "a/a", []),
        ("${B:-x}", "x", ["B"]),
        ("${E:-x}", "x", []),  # set but empty: the default
        ("${A:+y}${B:+y}", "y", []),
        ("$B", "", ["B"]),
    ],
)
def test_expand_as_docker_does(text: str, expanded: str, unknown: list[str]) -> None:
    assert expand(text, {"A": "a", "E": ""}) == (expanded, unknown)
