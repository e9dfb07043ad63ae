"""Base-image pins in GitHub workflows, on Megatron-LM's real 2025-10-25 state.

Its weekly uv.lock bump (`_update_dependencies.yml`) built Dockerfile.ci.dev on 25.06 with
`docker build ... --build-arg FROM_IMAGE_NAME=...` while the dev lane (its GitLab row and
`cicd-main.yml`'s build action, `file:` + `build-args: |`) was on 25.09."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from conftest import RunCli, git

from uvdock.config.settings import Config
from uvdock.errors import InputRefused
from uvdock.image import pins
from uvdock.image.bump import verify_edit
from uvdock.image.scan import scan_managed, workflow_pins

STATE = (
    Path(__file__).resolve().parents[1] / "data" / "megatron-lm-history" / "2025-10-25-9697129223"
)
UPDATE = ".github/workflows/_update_dependencies.yml"
CICD = ".github/workflows/cicd-main.yml"


def files() -> dict[str, str | bytes]:
    return {
        path.relative_to(STATE).as_posix(): path.read_bytes()
        for path in sorted(STATE.rglob("*"))
        if path.is_file()
    }


def workflow_of(pins_found: list[pins.Pin]) -> list[tuple[str, int, str | None, str]]:
    return [(p.path, p.line, p.lane, p.tag) for p in pins_found if p.source == "workflow"]


def test_both_real_shapes_are_managed_dev_pins(make_repo: Callable[..., Path]) -> None:
    scan = scan_managed(make_repo(files()), Config())
    assert workflow_of(scan.pins) == [
        (UPDATE, 64, "dev", "25.06-py3"),
        (CICD, 287, "dev", "25.09-py3"),
    ]
    findings = pins.check(scan)
    assert [(f.kind, f.path, f.line, f.tag) for f in findings] == [
        ("drift", UPDATE, 64, "25.06-py3")
    ]


def test_check_fails_and_show_lists_them_on_the_command_line(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(files())
    check = run_cli("--repo", repo, "image", "check")
    assert check.code == 1
    assert f"{UPDATE}:64: dev pin is 25.06-py3, expected 25.09-py3" in check.out + check.err
    show = json.loads(run_cli("--repo", repo, "--json", "image", "show").out)
    managed = {(p["path"], p["line"]) for p in show["pins"] if p["kind"] == "managed"}
    assert {(UPDATE, 64), (CICD, 287)} <= managed


def test_bump_moves_every_workflow_pin_and_only_the_reference(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(files())
    before = {path: (repo / path).read_text() for path in (UPDATE, CICD)}
    result = run_cli("--repo", repo, "image", "bump", "25.10-py3", "--offline")
    assert result.code == 0, result.err
    assert (repo / UPDATE).read_text() == before[UPDATE].replace(
        'FROM_IMAGE_NAME="nvcr.io/nvidia/pytorch:25.06-py3"',
        'FROM_IMAGE_NAME="nvcr.io/nvidia/pytorch:25.10-py3"',
    )
    assert (repo / CICD).read_text() == before[CICD].replace(
        "FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.09-py3",
        "FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.10-py3",
    )
    after = scan_managed(repo, Config())
    assert pins.check(after) == []
    assert {p.tag for p in after.lane_pins("dev")} == {"25.10-py3"}
    assert run_cli("--repo", repo, "image", "check").code == 0
    assert git(repo, "status", "--porcelain")


LANES = pins.lane_rules(Config())


@pytest.mark.parametrize(
    ("step", "lane"),
    [
        # a continuation line, --file=, the LTS Dockerfile
        (
            "      - run: |\n          docker build \\\n            --file=docker/Dockerfile.ci.lts \\\n"
            "            --build-arg FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:24.01-py3 .\n",
            "lts",
        ),
        # single-quoted, inside a one-line plain scalar
        (
            "      - run: docker build -f ./docker/Dockerfile.ci.dev --build-arg "
            "'FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.09-py3' .\n",
            "dev",
        ),
        # another Dockerfile: not a pin of any lane
        (
            "      - run: docker build -f docker/Dockerfile.docs --build-arg "
            "FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.09-py3 .\n",
            None,
        ),
        # a variable, not a reference
        (
            "      - run: docker build -f docker/Dockerfile.ci.dev --build-arg "
            'FROM_IMAGE_NAME="${{ env.BASE }}" .\n',
            None,
        ),
        # an echo of the words is no build
        (
            '      - run: echo "FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.09-py3 -f docker/Dockerfile.ci.dev"\n',
            None,
        ),
        # a build action building the LTS Dockerfile
        (
            "      - uses: docker/build-push-action@v5\n        with:\n"
            "          file: docker/Dockerfile.ci.lts\n          build-args: |\n"
            "            IMAGE_TYPE=lts\n            FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:24.01-py3\n",
            "lts",
        ),
    ],
)
def test_step_shapes(step: str, lane: str | None) -> None:
    text = "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n" + step
    yaml.compose(text)  # the sample itself is YAML
    found = workflow_pins("w.yml", text, LANES)
    assert [p.lane for p in found] == ([lane] if lane else [])
    for pin in found:
        assert text[pin.start : pin.end] == pin.value and pin.value.startswith("nvcr.io/")


def test_verify_edit_refuses_anything_but_the_references() -> None:
    old = "a: 'FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.09-py3'\nb: x\n"
    good = old.replace("25.09", "25.10")
    ref = {"nvcr.io/nvidia/pytorch:25.09-py3": "nvcr.io/nvidia/pytorch:25.10-py3"}
    verify_edit("w.yml", old, good, ref, 1)
    with pytest.raises(InputRefused, match="more"):
        verify_edit("w.yml", old, good.replace("b: x", "b: y"), ref, 1)
    with pytest.raises(InputRefused, match="more"):
        verify_edit("w.yml", old, old, ref, 1)  # nothing swapped is less than intended
    with pytest.raises(InputRefused, match="invalid YAML"):
        verify_edit("w.yml", old, good.replace("b: x", "b: [x"), ref, 1)


def test_verify_edit_reads_yaml_as_the_matrix_check_does() -> None:
    """Aliases and `<<:` merges as YAML reads them; a refusal names file and line."""
    old = (
        "base: &b {args: 'FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.09-py3'}\n"
        "step:\n  <<: *b\n  with: x\n"
    )
    ref = {"nvcr.io/nvidia/pytorch:25.09-py3": "nvcr.io/nvidia/pytorch:25.10-py3"}
    verify_edit("w.yml", old, old.replace("25.09", "25.10"), ref, 1)  # one anchored value
    with pytest.raises(InputRefused, match=r"^w\.yml:4: the edit would change the structure"):
        verify_edit("w.yml", old, old.replace("25.09", "25.10").replace("with:", "wit:"), ref, 1)


def test_the_same_reference_echoed_in_the_script_stays_and_the_bump_passes(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(files())
    text = (repo / UPDATE).read_text()
    echo = '          echo "built on nvcr.io/nvidia/pytorch:25.06-py3"\n'
    anchor = "          docker build -f docker/Dockerfile.ci.dev"
    (repo / UPDATE).write_text(text.replace(anchor, echo + anchor))
    git(repo, "commit", "-qam", "echo")
    result = run_cli("--repo", repo, "image", "bump", "25.10-py3", "--offline")
    assert result.code == 0, result.err
    after = (repo / UPDATE).read_text()
    assert echo in after  # a mention, not a pin: listed, never changed
    assert 'FROM_IMAGE_NAME="nvcr.io/nvidia/pytorch:25.10-py3"' in after


def test_workflow_globs_are_configurable_and_stay_in_the_repository(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(files())
    moved = repo / "ci" / "lock-bump.yaml"
    moved.parent.mkdir()
    (repo / UPDATE).rename(moved)
    (repo / "uvdock.toml").write_text('workflow-files = ["ci/*.yaml"]\n')
    scan = scan_managed(repo, Config(workflow_files=("ci/*.yaml",)))
    assert workflow_of(scan.pins) == [("ci/lock-bump.yaml", 64, "dev", "25.06-py3")]
    assert run_cli("--repo", repo, "image", "check").code == 1
    (repo / "uvdock.toml").write_text('workflow-files = ["../*.yml"]\n')
    refused = run_cli("--repo", repo, "image", "check")
    assert refused.code == 2
    assert "workflow-files" in refused.err


def test_two_pins_of_different_tags_in_one_workflow_both_move(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(files())
    text = (repo / CICD).read_text()
    step = (
        "      - name: Weekly lock bump image\n"
        "        run: docker build -f docker/Dockerfile.ci.dev --build-arg"
        ' FROM_IMAGE_NAME="nvcr.io/nvidia/pytorch:25.06-py3" .\n\n'
    )
    anchor = "      - name: Build and push\n"
    (repo / CICD).write_text(text.replace(anchor, step + anchor, 1))
    git(repo, "commit", "-qam", "second pin")
    result = run_cli("--repo", repo, "image", "bump", "25.10-py3", "--offline")
    assert result.code == 0, result.err
    after = (repo / CICD).read_text()
    assert "25.06-py3" not in after and "25.09-py3" not in after
    assert after.count("nvcr.io/nvidia/pytorch:25.10-py3") == 2


def test_an_aliased_build_step_is_one_pin() -> None:
    text = (
        "on: push\njobs:\n  a:\n    steps:\n      - &build\n"
        "        run: docker build -f docker/Dockerfile.ci.dev --build-arg"
        " FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.09-py3 .\n"
        "  b:\n    steps:\n      - *build\n"
    )
    found = workflow_pins("w.yml", text, LANES)
    assert [(p.line, p.tag) for p in found] == [(6, "25.09-py3")]


def test_nested_aliases_in_a_hostile_workflow_are_read_in_linear_time() -> None:
    import time

    lines = ['a0: &a0 ["FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.09-py3"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 12)]
    text = "\n".join(lines) + "\nrun: docker build -f docker/Dockerfile.ci.dev .\n"
    start = time.perf_counter()
    assert workflow_pins("w.yml", text, LANES) == []  # 9**11 paths, 12 nodes
    assert time.perf_counter() - start < 5
