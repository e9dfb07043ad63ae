"""Issue 20 item 4: `ARG FROM_IMAGE_NAME=...` edited as Docker reads the Dockerfile, or refused.

Each case rewrites the ARG line of the real Megatron-LM Dockerfile.ci.dev (a git copy), then
runs `image check` and `image bump` as a user would. An edit changes the default's value and
nothing else (continuations, other ARGs, quotes stay); a shape the span editor cannot edit
exactly is a check finding (exit 1, no bump advice) and a bump refusal (exit 2, nothing
changed). Docker's rules: instruction keywords are case-insensitive, variable names are not.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RunCli
from samples.pins import snapshot

DOCKERFILE = "docker/Dockerfile.ci.dev"
PIN = "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3\n"
OLD, NEW = "26.06-py3", "26.07-py3"

# (id, text replacing the ARG line, text prepended to the file)
EDITED = [
    (
        "continuation",
        "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3 \\\n    IMAGE_TYPE=dev\n",
        "",
    ),
    (
        "blanks-after-escape",
        "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3 \\  \t\n  B=1\n",
        "",
    ),
    (
        "two-args-one-line",
        "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3 IMAGE_TYPE=dev\n",
        "",
    ),
    ("arg-first", "ARG IMAGE_TYPE=dev FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3\n", ""),
    (
        "lowercase-keyword-other-variable",
        "arg FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3\n"
        "arg from_image_name=nvcr.io/nvidia/pytorch:25.01-py3\n",
        "",
    ),
    (
        "comment-inside-continuation",
        'ARG A=1 \\\n# the base image\n    FROM_IMAGE_NAME="nvcr.io/nvidia/pytorch:26.06-py3" \\\n    B=2\n',
        "",
    ),
    (
        "escape-directive",
        "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3 `\n    IMAGE_TYPE=dev\n",
        "# escape=`\n",
    ),
    (
        "heredoc-body-is-no-instruction",
        PIN + "RUN <<EOF\nARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.01-py3\nEOF\n",
        "",
    ),
]
REFUSED = [
    ("value-split-across-lines", "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/\\\npytorch:26.06-py3\n", ""),
    ("partial-quotes", 'ARG FROM_IMAGE_NAME=nvcr.io/nvidia/"pytorch:26.06-py3"\n', ""),
    ("escaped-character", "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch\\:26.06-py3\n", ""),
]


def _shape(repo: Path, line: str, prefix: str) -> str:
    path = repo / DOCKERFILE
    text = path.read_text()
    assert PIN in text
    shaped = prefix + text.replace(PIN, line, 1)
    path.write_text(shaped)
    return shaped


@pytest.mark.parametrize(("line", "prefix"), [c[1:] for c in EDITED], ids=[c[0] for c in EDITED])
def test_bump_edits_the_default_as_docker_reads_it(
    megatron_repo: Path, run_cli: RunCli, line: str, prefix: str
) -> None:
    shaped = _shape(megatron_repo, line, prefix)
    check = run_cli("--repo", megatron_repo, "image", "check")
    assert check.code == 0, check.out + check.err
    result = run_cli("--repo", megatron_repo, "image", "bump", NEW, "--offline")
    assert result.code == 0, result.err
    # Only the default's value changed: the other variable, the heredoc body, the
    # continuation and the comment are byte for byte what they were.
    expected = shaped.replace(line, line.replace(f"pytorch:{OLD}", f"pytorch:{NEW}", 1), 1)
    assert (megatron_repo / DOCKERFILE).read_text() == expected
    assert run_cli("--repo", megatron_repo, "image", "check").code == 0


@pytest.mark.parametrize(("line", "prefix"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_shapes_the_editor_cannot_edit_are_refused(
    megatron_repo: Path, run_cli: RunCli, line: str, prefix: str
) -> None:
    _shape(megatron_repo, line, prefix)
    before = snapshot(megatron_repo)
    check = run_cli("--repo", megatron_repo, "image", "check")
    assert check.code == 1
    assert f"{DOCKERFILE}:4: the default of ARG FROM_IMAGE_NAME" in check.out
    assert "image bump" not in check.err  # no advice to run a bump that would refuse
    result = run_cli("--repo", megatron_repo, "image", "bump", NEW, "--offline")
    assert result.code == 2
    assert result.err.startswith(f"error: {DOCKERFILE}:4: ")
    assert "nothing was changed" in result.err
    assert snapshot(megatron_repo) == before
