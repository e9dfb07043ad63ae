"""`lock --upgrade --pr-body`: a real relock with upgrades by the container's uv (podman,
offline wheel folder), then the pull request: title, label line, lock diff table with the
base image's packages marked, checklist."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git
from samples import gfm, json_schemas
from samples.lock_bump import DEPENDENCIES, make_stale
from samples.pins import snapshot

pytestmark = pytest.mark.engine


def _podman(engine_image: str) -> list[str]:
    return ["--engine", "podman", "--image", engine_image]


@pytest.fixture
def stale_project(
    uv_project: Callable[..., Path], engine_image: str, run_cli: RunCli, tmp_path: Path
) -> Path:
    """samples/lock_bump.py's project, committed, on a branch `weekly`."""
    repo = uv_project(DEPENDENCIES)

    def lock(path: Path) -> None:
        locked = run_cli("--repo", path, *_podman(engine_image), "lock")
        assert locked.code == 0, locked.err

    make_stale(repo, lock, tmp_path / "held")
    commit_all(repo, "locked")
    git(repo, "checkout", "-q", "-b", "weekly")
    return repo


def test_upgrade_prints_the_pull_request(
    stale_project: Path, engine_image: str, run_cli: RunCli
) -> None:
    result = run_cli(
        "--repo", stale_project, *_podman(engine_image), "lock", "--upgrade", "--pr-body"
    )
    assert result.code == 0, result.err
    today = datetime.now(UTC).date().isoformat()
    body = result.out
    lines = body.splitlines()
    assert lines[0] == f"chore: Bump `uv.lock` (weekly) ({today})"
    assert lines[1] == ""
    assert "Label: `Run functional tests`" in lines
    assert "with `uv lock --upgrade` in the CI container" in body
    rows = {row[0]: row for row in gfm.table_rows(body.replace("`", ""))[1:]}
    assert rows["alpha"][1:4] == ["minor", "1.0.0", "1.1.0"]
    assert rows["gamma"][1:4] == ["**major**", "1.0.0", "2.0.0"]
    assert rows["torch (base image)"][1:4] == ["minor", "2.8.0", "2.9.0"]
    assert rows["delta"][1].startswith(":warning: **downgrade**")
    assert "1 major, 2 minor, 1 downgrade" in body
    items = gfm.task_items(body)
    assert [i.split(" ")[0] for i in items] == ["Verify", "The", "From", "The"]
    assert any("/ok to test <commit-sha>" in i for i in items)
    assert 'name = "alpha"\nversion = "1.1.0"' in (stale_project / "uv.lock").read_text()
    assert "uv.lock changed on weekly" in result.err  # progress on stderr: stdout is the PR


def test_upgrade_package_moves_only_that_package(
    stale_project: Path, engine_image: str, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UVDOCK_LOCK_BUMP_TITLE", "chore(beep boop 🤖): Bump `uv.lock` ({branch})")
    result = run_cli(
        "--repo", stale_project, *_podman(engine_image), "--json",
        "lock", "--upgrade-package", "alpha", "--pr-body", "--branch", "main",
    )  # fmt: skip
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    json_schemas.check(payload)  # the documented shape (docs/json.md)
    assert payload["title"] == "chore(beep boop 🤖): Bump `uv.lock` (main)"
    # delta 4.0.0 left the index: uv moves it whatever --upgrade-package says
    assert payload["kinds"] == {"minor": 1, "downgrade": 1}
    assert [c["name"] for c in payload["changed"]] == ["alpha", "delta"]
    assert payload["pr_body"].startswith(payload["title"] + "\n\n")
    assert "`uv lock --upgrade-package alpha`" in payload["pr_body"]


def test_pr_body_needs_an_upgrade(stale_project: Path, engine_image: str, run_cli: RunCli) -> None:
    before = snapshot(stale_project)
    for words in (["--pr-body"], ["--check", "--upgrade", "--pr-body"]):
        result = run_cli("--repo", stale_project, *_podman(engine_image), "lock", *words)
        assert result.code == 2, result.err
        assert "--pr-body describes an upgrade" in result.err
    bad = run_cli(
        "--repo", stale_project, *_podman(engine_image), "lock", "--upgrade", "--pr-body",
        "--branch", "--upload-pack=x",
    )  # fmt: skip
    assert bad.code == 2
    assert snapshot(stale_project) == before


def test_a_bad_title_is_refused_before_uv_runs(
    stale_project: Path, engine_image: str, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UVDOCK_LOCK_BUMP_TITLE", "Bump ({sha})")
    before = snapshot(stale_project)
    result = run_cli(
        "--repo", stale_project, *_podman(engine_image), "lock", "--upgrade", "--pr-body"
    )
    assert result.code == 2
    assert "unknown placeholder {sha}" in result.err
    assert snapshot(stale_project) == before


def test_nothing_to_upgrade_prints_no_body(
    uv_project: Callable[..., Path], engine_image: str, run_cli: RunCli
) -> None:
    repo = uv_project(("alpha",))
    assert run_cli("--repo", repo, *_podman(engine_image), "lock", "--upgrade").code == 0
    commit_all(repo, "locked")
    result = run_cli("--repo", repo, *_podman(engine_image), "lock", "--upgrade", "--pr-body")
    assert result.code == 0, result.err
    assert result.out == ""  # CI: `[ -s pr.md ]` says whether to open a pull request
    assert "uv.lock unchanged: no pull request to open" in result.err
