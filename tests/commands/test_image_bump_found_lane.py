"""A lane found by meaning is bumped the way dev and lts are (one write path): the offline
registry report in --json, the pull-request handoff, and --pr-body."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli
from samples import family

MakeRepo = Callable[..., Path]
LANE = "docker/Dockerfile.ci:BASE_IMAGE"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")


def test_a_found_lane_bump_reports_the_skipped_check_and_the_handoff(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(family.BASE_IMAGE_ARG)
    dry = run_cli("--repo", repo, "--json", "--dry-run", "image", "bump", "26.07-py3")
    assert dry.code == 0, dry.err
    payload = json.loads(dry.out)
    assert payload["registry"]["checked"] is False and payload["registry"]["url"] == ""
    assert payload["handoff"]["title"]
    bump = run_cli("--repo", repo, "image", "bump", "26.07-py3", "--pr-body")
    assert bump.code == 0, bump.err
    assert f"{LANE} base image: 26.06-py3 -> 26.07-py3" in bump.err
    assert f"Moves the **{LANE}** CI base image" in bump.out  # the pull request's body
    assert (repo / "docker/Dockerfile.ci").read_text().count("pytorch:26.07-py3") == 1


def test_no_tag_for_a_found_lane_hints_its_latest_bump(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(family.BASE_IMAGE_ARG)
    result = run_cli("--repo", repo, "image", "bump")
    assert result.code == 2
    assert f"uvdock image bump --lane {LANE} --latest" in result.err
