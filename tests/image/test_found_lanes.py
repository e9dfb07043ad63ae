"""Issue 28: bases found by meaning in repositories of the family that are not Megatron-LM.

Each shape is a real git repository written from the issue's descriptions
(tests/samples/family.py); `image show`, `image check` and `image bump` run on it as a
user runs them, with no configuration unless the case is about configuration.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli
from samples import family
from samples.pins import snapshot

MakeRepo = Callable[..., Path]
NO_PIN_FILES = 'dev-pin-file = ""\nlts-pin-file = ""\n'  # neither lane has a pin file


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No registry here: a bump says it did not check the tag (tests/commands/ ask one)."""
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")


def _show(run_cli: RunCli, repo: Path) -> list[dict[str, object]]:
    result = run_cli("--repo", repo, "--json", "image", "show")
    assert result.code == 0, result.err
    return list(json.loads(result.out)["pins"])


def test_base_image_arg_and_a_workflow_are_one_managed_lane(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(family.BASE_IMAGE_ARG)
    lane = "docker/Dockerfile.ci:BASE_IMAGE"
    managed = [p for p in _show(run_cli, repo) if p["managed"]]
    assert {(p["path"], p["line"], p["lane"]) for p in managed} == {
        ("docker/Dockerfile.ci", 2, lane),
        (".github/workflows/ci.yml", 11, lane),
        (".github/workflows/ci.yml", 19, lane),
    }
    check = run_cli("--repo", repo, "image", "check")
    assert check.code == 0, check.out + check.err
    assert f"agree: {lane} {family.PYTORCH} (3 pins)" in check.out
    before = snapshot(repo)
    dry = run_cli("--repo", repo, "--dry-run", "image", "bump", "26.07-py3")
    assert dry.code == 0, dry.err
    assert dry.out.count("+") >= 3 and "3 docker/Dockerfile.ci:BASE_IMAGE references" in dry.out
    assert snapshot(repo) == before
    assert run_cli("--repo", repo, "image", "bump", "26.07-py3").code == 0
    after = snapshot(repo)
    assert all("26.06-py3" not in str(text) for text in after.values())
    assert run_cli("--repo", repo, "image", "check").code == 0
    # Drift between the ARG and one CI reference is a finding with the bump to run.
    workflow = repo / ".github/workflows/ci.yml"
    workflow.write_text(workflow.read_text().replace("26.07-py3", "26.05-py3", 1))
    drift = run_cli("--repo", repo, "image", "check")
    assert drift.code == 1
    assert ".github/workflows/ci.yml:11: docker/Dockerfile.ci:BASE_IMAGE is" in drift.out
    assert f"--lane {lane}" in drift.err


def test_the_target_ci_builds_decides_which_of_two_bases_is_the_lane(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(family.TWO_BASES)
    pins = _show(run_cli, repo)
    lane = "docker/Dockerfile:PYTORCH_IMAGE"
    assert {(p["path"], p["line"]) for p in pins if p["lane"] == lane} == {
        ("docker/Dockerfile", 1),
        (".gitlab-ci.yml", 2),  # the variable the job's --build-arg reads
    }
    cuda = next(p for p in pins if p["path"] == "docker/Dockerfile" and p["line"] == 3)
    assert cuda["kind"] == "unmanaged" and "not the base of a built target (train)" in str(
        cuda["why"]
    )
    assert run_cli("--repo", repo, "image", "check").code == 0
    dry = run_cli("--repo", repo, "--dry-run", "image", "bump", "26.07-py3")
    assert dry.code == 0, dry.err
    assert "+ARG PYTORCH_IMAGE=nvcr.io/nvidia/pytorch:26.07-py3" in dry.out
    assert '+  PYTORCH_IMAGE: "nvcr.io/nvidia/pytorch:26.07-py3"' in dry.out
    assert "-ARG CUDA_IMAGE" not in dry.out


def test_other_nvidia_images_and_tag_schemes_are_lanes(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(family.OTHER_IMAGES)
    pins = {(p["path"], p["line"]): p for p in _show(run_cli, repo)}
    assert pins[("docker/cuda.Dockerfile", 1)]["lane"] == "docker/cuda.Dockerfile:BASE_IMAGE"
    assert pins[("serve/Dockerfile.vllm", 1)]["lane"] == "serve/Dockerfile.vllm:FROM"
    assert pins[("Dockerfile", 1)]["lane"] == "Dockerfile:FROM"
    lint = pins[("tools/Dockerfile.lint", 1)]
    assert lint["kind"] == "unmanaged" and "not an NGC" in str(lint["why"])
    assert run_cli("--repo", repo, "image", "check").code == 0
    # Several lanes: the tag says which one it fits, or --lane names it.
    cuda = run_cli("--repo", repo, "--dry-run", "image", "bump", "26.06-cuda13.1-devel-ubuntu24.04")
    assert cuda.code == 0, cuda.err
    assert "+ARG BASE_IMAGE=nvcr.io/nvidia/cuda-dl-base:26.06-cuda13.1-devel-ubuntu24.04" in (
        cuda.out
    )
    hub = run_cli("--repo", repo, "--dry-run", "image", "bump", "12.9.1-devel-ubuntu22.04")
    assert hub.code == 0, hub.err and "+FROM nvidia/cuda:12.9.1-devel-ubuntu22.04" in hub.out
    older = run_cli("--repo", repo, "image", "bump", "12.6.3-devel-ubuntu22.04")
    assert older.code == 2 and "older than" in older.err
    vllm = run_cli(
        "--repo",
        repo,
        "--dry-run",
        "image",
        "bump",
        "26.05-py3",
        "--lane",
        "serve/Dockerfile.vllm:FROM",
    )
    assert vllm.code == 0 and "+FROM nvcr.io/nvidia/vllm:26.05-py3 AS serve" in vllm.out
    family_change = run_cli("--repo", repo, "image", "bump", "12.9.1-devel-ubuntu24.04")
    assert family_change.code == 2


def test_a_dead_build_argument_is_a_finding_naming_both_places(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    for files in (
        family.DEAD_BUILD_ARG,
        {**family.DEAD_BUILD_ARG, "uvdock.toml": family.README_CONFIG},
    ):
        repo = make_repo(files)
        check = run_cli("--repo", repo, "image", "check")
        assert check.code == 1, check.out + check.err
        assert (
            ".github/workflows/deps.yml:9: build argument FROM_IMAGE_NAME is passed to"
            " docker/Dockerfile.ci, which declares no ARG FROM_IMAGE_NAME"
            " (docker/Dockerfile.ci:2 builds FROM ${BASE_IMAGE}; its base is ARG BASE_IMAGE)"
        ) in check.out
        dry = run_cli("--repo", repo, "--dry-run", "image", "bump", "26.07-py3")
        assert dry.code == 0, dry.err
        assert "+ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:26.07-py3" in dry.out
        assert "deps.yml" not in dry.out  # the dead line is no reference of the base


def test_nothing_managed_fails_and_names_what_was_found(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo({"Dockerfile": "FROM python:3.12-slim\n", "uvdock.toml": NO_PIN_FILES})
    check = run_cli("--repo", repo, "image", "check")
    assert check.code == 1
    assert "Dockerfile:1: base `python:3.12-slim` is managed by no lane" in check.out
    assert "no base image is managed" in check.err


def test_a_from_without_an_image_is_a_finding_not_a_crash(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo({"Dockerfile": "FROM\n", "uvdock.toml": NO_PIN_FILES})
    check = run_cli("--repo", repo, "image", "check")
    assert check.code == 1, check.err
    assert "Dockerfile:1: base `` is managed by no lane" in check.out


@pytest.mark.parametrize(
    "files",
    [family.BASE_IMAGE_ARG, family.TWO_BASES, family.OTHER_IMAGES, family.DEAD_BUILD_ARG],
    ids=["base-image-arg", "two-bases", "other-images", "dead-build-arg"],
)
def test_explain_prints_a_table_that_changes_nothing_when_pasted(
    make_repo: MakeRepo, run_cli: RunCli, files: dict[str, str]
) -> None:
    import tomllib

    repo = make_repo(files)
    explained = run_cli("--repo", repo, "image", "show", "--explain")
    assert explained.code == 0, explained.err
    table = tomllib.loads(explained.out)["tool"]["uvdock"]
    assert table["dockerfile"] in files and table["image"].endswith(":local")
    before = run_cli("--repo", repo, "--json", "image", "check")
    (repo / "pyproject.toml").write_text(explained.out)
    after = run_cli("--repo", repo, "--json", "image", "check")
    assert (after.code, json.loads(after.out)) == (before.code, json.loads(before.out))
    # Pasted, the table explains itself again: the same keys and values.
    again = run_cli("--repo", repo, "image", "show", "--explain")
    assert tomllib.loads(again.out) == tomllib.loads(explained.out)


def test_explain_on_megatron_lm_names_its_lanes_keys(megatron_repo: Path, run_cli: RunCli) -> None:
    import tomllib

    explained = run_cli("--repo", megatron_repo, "image", "show", "--explain")
    table = tomllib.loads(explained.out)["tool"]["uvdock"]
    assert table["dev-pin-file"] == "docker/.ngc_version.dev"
    assert table["lts-dockerfile"] == "docker/Dockerfile.ci.lts"
    assert table["image"] == "megatron-lm:local" and table["build-target"] == "main"
    (megatron_repo / "uvdock.toml").write_text(explained.out.replace("[tool.uvdock]\n", ""))
    assert run_cli("--repo", megatron_repo, "image", "check").code == 0


def test_image_build_uses_the_dockerfiles_own_base_and_the_ci_target(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(family.BASE_IMAGE_ARG, name="trainer")
    result = run_cli("--repo", repo, "--engine", "podman", "--dry-run", "image", "build")
    assert result.code == 0, result.err
    assert "podman build --target ci -f docker/Dockerfile.ci -t trainer:local ." in result.out


def test_a_pin_file_and_a_workflow_env_key_are_references_of_the_lane(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(family.PIN_FILE_AND_ENV)
    lane = "docker/Dockerfile.train:BASE_IMAGE"
    managed = {(p["path"], p["line"]) for p in _show(run_cli, repo) if p["lane"] == lane}
    assert managed == {
        ("docker/Dockerfile.train", 1),
        ("docker/base-image.txt", 1),
        (".github/workflows/image.yml", 3),
    }
    assert run_cli("--repo", repo, "image", "check").code == 0
    assert run_cli("--repo", repo, "image", "bump", "26.07-py3").code == 0
    assert (repo / "docker/base-image.txt").read_text() == "nvcr.io/nvidia/pytorch:26.07-py3\n"
    assert (
        "  BASE_IMAGE: nvcr.io/nvidia/pytorch:26.07-py3\n"
        in (repo / ".github/workflows/image.yml").read_text()
    )
    (repo / "docker/base-image.txt").write_text("nvcr.io/nvidia/pytorch:26.05-py3\n")
    drift = run_cli("--repo", repo, "image", "check")
    assert drift.code == 1 and "docker/base-image.txt:1: " in drift.out


def test_megatron_lms_arg_name_in_another_dockerfile_is_the_dev_lane(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    """The derived `dockerfile` is docker/Dockerfile.ci, so Megatron-LM's dev lane reads its
    FROM_IMAGE_NAME; the LTS lane, none of whose files exist, is no finding."""
    repo = make_repo(family.FROM_IMAGE_NAME_ELSEWHERE)
    check = run_cli("--repo", repo, "image", "check")
    assert check.code == 0, check.out + check.err
    assert "agree: dev 26.06-py3 (1 pin)" in check.out
