"""Acceptance review of issue 20 items 4, 6, 7 and issue 21 item 5, on the real Megatron-LM files.

Each test follows what a user does: run the command, read the message, copy the command it
suggests and run that too. Found in review:
- a managed file deleted but not committed was called "a sparse checkout?" with the hint
  `git sparse-checkout add ...`, which git refuses outside a sparse checkout;
- `image bump LTS_TAG` (dev tag older, equal to LTS) suggested `--lts`, which changes nothing;
- `ARG FROM_IMAGE_NAME=` after the default empties it (Docker reads the last global
  declaration: FROM gets no image) while check passed and bump exited 0.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git
from samples.pins import snapshot

BUILD_FILE = ".gitlab/stages/01.build.yml"
DOCKERFILE = "docker/Dockerfile.ci.dev"
PIN = "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3\n"


def _run_suggested(repo: Path, text: str, start: str) -> None:
    """Run the backquoted command the message suggests (as a user copies it), from `start`."""
    command = text[text.index(start) :].split("`", 1)[0]
    subprocess.run(command.split(), cwd=repo, check=True, capture_output=True)


def test_deleted_uncommitted_file_names_the_way_back_and_a_committed_removal_is_none(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    (megatron_repo / BUILD_FILE).unlink()
    check = run_cli("--repo", megatron_repo, "image", "check")
    assert check.code == 1
    assert f"{BUILD_FILE}: tracked by git but absent from the work tree" in check.out
    assert "sparse" not in check.out  # not a sparse checkout: its hint fails here
    before = snapshot(megatron_repo)
    bump = run_cli("--repo", megatron_repo, "image", "bump", "26.07-py3", "--offline")
    assert bump.code == 2
    assert "nothing was changed" in bump.err
    assert "sparse" not in bump.err
    assert snapshot(megatron_repo) == before
    _run_suggested(megatron_repo, check.out, "git restore")
    assert run_cli("--repo", megatron_repo, "image", "check").code == 0
    # Removed and committed: no longer tracked, so no longer a managed file of this repository.
    git(megatron_repo, "rm", "-q", "-r", ".gitlab")
    commit_all(megatron_repo, "no GitLab CI")
    assert run_cli("--repo", megatron_repo, "image", "check").code == 0


def test_bump_to_the_lts_tag_suggests_no_lts_bump(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "image", "bump", "25.09-py3", "--offline")
    assert result.code == 2
    assert "--lts" not in result.err  # LTS is at 25.09-py3 already: --lts changes nothing
    assert "already the LTS lane's tag" in result.err
    assert "--allow-downgrade" in result.err
    moved = run_cli(
        "--repo", megatron_repo, "image", "bump", "25.09-py3", "--offline", "--allow-downgrade"
    )
    assert moved.code == 0, moved.err
    assert (megatron_repo / "docker/.ngc_version.dev").read_text().strip().endswith(":25.09-py3")


def test_the_lts_hint_between_lts_and_dev_runs_as_written(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    result = run_cli("--repo", megatron_repo, "image", "bump", "25.11-py3", "--offline")
    assert result.code == 2
    assert "`uvdock image bump 25.11-py3 --lts`" in result.err
    moved = run_cli("--repo", megatron_repo, "image", "bump", "25.11-py3", "--lts", "--offline")
    assert moved.code == 0, moved.err
    assert (megatron_repo / "docker/.ngc_version.lts").read_text().strip().endswith(":25.11-py3")


@pytest.mark.parametrize("empty", ["ARG FROM_IMAGE_NAME=\n", 'ARG FROM_IMAGE_NAME=""\n'])
def test_an_empty_default_after_the_pin_is_refused(
    megatron_repo: Path, run_cli: RunCli, empty: str
) -> None:
    path = megatron_repo / DOCKERFILE
    path.write_text(path.read_text().replace(PIN, PIN + empty, 1))
    commit_all(megatron_repo, "empty override")
    before = snapshot(megatron_repo)
    check = run_cli("--repo", megatron_repo, "image", "check")
    assert check.code == 1
    assert f"{DOCKERFILE}:5: `ARG FROM_IMAGE_NAME=` replaces the default of line 4" in check.out
    bump = run_cli("--repo", megatron_repo, "image", "bump", "26.07-py3", "--offline")
    assert bump.code == 2
    assert bump.err.startswith(f"error: {DOCKERFILE}:5: ")
    assert snapshot(megatron_repo) == before
    assert git(megatron_repo, "status", "--porcelain") == ""


def test_an_empty_default_alone_is_no_pin(megatron_repo: Path, run_cli: RunCli) -> None:
    """`ARG FROM_IMAGE_NAME=""` asks the build for the value (as a bare ARG does): no pin to bump."""
    path = megatron_repo / DOCKERFILE
    path.write_text(path.read_text().replace(PIN, 'ARG FROM_IMAGE_NAME=""\n', 1))
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.07-py3", "--offline")
    assert result.code == 0, result.err
    assert 'ARG FROM_IMAGE_NAME=""\n' in path.read_text()


def test_yaml_load_leaves_the_garbage_collector_as_it_found_it() -> None:
    """load() pauses the cyclic collector (large recipes); it must come back on every path."""
    import gc

    from uvdock.errors import InputRefused
    from uvdock.formats.yaml import load

    assert gc.isenabled()
    assert load("a: [1, 2]\n", "x.yaml")
    assert gc.isenabled()
    with pytest.raises(InputRefused, match=r"x\.yaml:2: not valid YAML"):
        load("a: [1\nb: ]\n", "x.yaml")
    assert gc.isenabled()
    gc.disable()
    try:
        load("a: 1\n", "x.yaml")
        assert not gc.isenabled()  # a caller's own choice is kept
    finally:
        gc.enable()
