"""Issue 20 item 6, GitLab matrix: a bump is what YAML reads, or it is refused.

Each case rewrites the dev amd64 row of the real Megatron-LM `.gitlab/stages/01.build.yml`
(a git copy) into another shape. Either the bump's result, read by PyYAML, is the original
read by PyYAML with every dev row's BASE_IMAGE at the new image and nothing else changed; or
the bump refuses (exit 2, naming file and line, nothing changed). Never exit 0 with a stale row.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import RunCli
from samples.pins import snapshot

BUILD = ".gitlab/stages/01.build.yml"
OLD_IMAGE = "nvcr.io/nvidia/pytorch:26.06-py3"
NEW_TAG = "26.07-py3"
NEW_IMAGE = f"nvcr.io/nvidia/pytorch:{NEW_TAG}"
ROW = (
    "      - IMAGE: CI_MCORE_DEV_IMAGE\n"
    "        FILE: Dockerfile.ci.dev\n"
    "        IMAGE_TYPE: dev\n"
    f"        BASE_IMAGE: {OLD_IMAGE}\n"
    "        PLATFORM: amd64\n"
)
BLOCK_TEXT_JOB = (
    "\ndocs:example:\n"
    "  variables:\n"
    "    NOTE: |\n"
    "      - IMAGE: CI_MCORE_DEV_IMAGE\n"
    "        FILE: Dockerfile.ci.dev\n"
    f"        BASE_IMAGE: {OLD_IMAGE}\n"
    "  script:\n"
    "    - >-\n"
    "      echo\n"
    "    - |\n"
    "      cat <<EOF\n"
    "      - FILE: Dockerfile.ci.dev\n"
    "        IMAGE_TYPE: dev\n"
    f"        BASE_IMAGE: {OLD_IMAGE}\n"
    "      EOF\n"
)

# (id, the dev amd64 row rewritten, text appended to the file)
EDITED = [
    (
        "duplicate-base-image-last-wins",
        ROW.replace(
            "        BASE_IMAGE:",
            "        BASE_IMAGE: nvcr.io/nvidia/pytorch:25.01-py3\n        BASE_IMAGE:",
        ),
        "",
    ),
    ("row-lookalike-in-block-scalars", ROW, BLOCK_TEXT_JOB),
    (
        "duplicate-file-key-last-wins",
        ROW.replace(
            "        FILE: Dockerfile.ci.dev\n",
            "        FILE: Dockerfile.linting\n        FILE: Dockerfile.ci.dev\n",
        ),
        "",
    ),
]
REFUSED = [
    (
        "flow-mapping-row",
        "      - {IMAGE: CI_MCORE_DEV_IMAGE, FILE: Dockerfile.ci.dev, IMAGE_TYPE: dev,"
        f' BASE_IMAGE: "{OLD_IMAGE}", PLATFORM: amd64}}\n',
        "",
        0,
    ),
    ("anchor", ROW.replace("BASE_IMAGE: ", "BASE_IMAGE: &dev "), "", 3),
    ("dash-on-its-own-line", ROW.replace("      - IMAGE:", "      -\n        IMAGE:"), "", 4),
    ("str-tag", ROW.replace("BASE_IMAGE: ", "BASE_IMAGE: !!str "), "", 3),
    ("value-on-the-next-line", ROW.replace("BASE_IMAGE: ", "BASE_IMAGE:\n          "), "", 4),
    (
        "plain-value-continued-on-the-next-line",
        ROW.replace(f"{OLD_IMAGE}\n", f"{OLD_IMAGE}\n          -extra\n"),
        "",
        3,
    ),
    ("image-type-null", ROW.replace("IMAGE_TYPE: dev", "IMAGE_TYPE: ~"), "", 2),
]


def _shape(repo: Path, row: str, tail: str) -> int:
    """Rewrite the row; returns the 1-based line where it starts."""
    path = repo / BUILD
    text = path.read_text()
    assert text.count(ROW) == 1
    path.write_text(text.replace(ROW, row) + tail)
    return text[: text.index(ROW)].count("\n") + 1


def _bumped(document: Any) -> Any:
    """The document as PyYAML reads it, with every dev row's BASE_IMAGE at the new image."""
    result = copy.deepcopy(document)

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                dev = isinstance(item, dict) and item.get("FILE") == "Dockerfile.ci.dev"
                if dev and item.get("IMAGE_TYPE", "") in ("dev", "") and "BASE_IMAGE" in item:
                    item["BASE_IMAGE"] = NEW_IMAGE
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(result)
    return result


@pytest.mark.parametrize(("row", "tail"), [c[1:] for c in EDITED], ids=[c[0] for c in EDITED])
def test_bump_is_what_yaml_reads(megatron_repo: Path, run_cli: RunCli, row: str, tail: str) -> None:
    _shape(megatron_repo, row, tail)
    before = yaml.safe_load((megatron_repo / BUILD).read_text())
    check = run_cli("--repo", megatron_repo, "image", "check")
    assert check.code == 0, check.out + check.err  # the last duplicate is the pin YAML reads
    result = run_cli("--repo", megatron_repo, "image", "bump", NEW_TAG, "--offline")
    assert result.code == 0, result.err
    after = yaml.safe_load((megatron_repo / BUILD).read_text())
    assert after == _bumped(before)
    assert after != before


@pytest.mark.parametrize(
    ("row", "tail", "offset"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_shapes_the_editor_cannot_edit_are_refused(
    megatron_repo: Path, run_cli: RunCli, row: str, tail: str, offset: int
) -> None:
    line = _shape(megatron_repo, row, tail) + offset
    yaml.safe_load((megatron_repo / BUILD).read_text())  # valid YAML, a real shape
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", NEW_TAG, "--offline")
    assert result.code == 2, result.out + result.err
    assert result.err.startswith(f"error: {BUILD}:{line}: "), result.err
    assert "nothing was changed" in result.err
    assert snapshot(megatron_repo) == before


def test_bump_to_the_current_tag_with_a_stale_row_is_not_exit_0(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    row = (
        "      - {IMAGE: CI_MCORE_DEV_IMAGE, FILE: Dockerfile.ci.dev, IMAGE_TYPE: dev,"
        " BASE_IMAGE: nvcr.io/nvidia/pytorch:26.05-py3, PLATFORM: amd64}\n"
    )
    line = _shape(megatron_repo, row, "")
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.06-py3", "--offline")
    assert result.code == 2
    assert result.err.startswith(f"error: {BUILD}:{line}: ")
    assert "would stay nvcr.io/nvidia/pytorch:26.05-py3" in result.err
    assert snapshot(megatron_repo) == before
