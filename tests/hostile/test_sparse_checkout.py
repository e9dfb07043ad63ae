"""Issue 20 item 7: a managed file git tracks but a sparse checkout left out is no pass.

A real `git sparse-checkout set --no-cone` clone of the Megatron-LM copy without `.gitlab/`:
`image check` names the missing file (exit 1), `image bump` refuses (exit 2, nothing changed)
instead of bumping the other pins and leaving the tracked matrix stale.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RunCli, git
from samples.pins import snapshot

BUILD_FILE = ".gitlab/stages/01.build.yml"


@pytest.fixture
def sparse(megatron_repo: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "sparse"
    git(tmp_path, "clone", "-q", str(megatron_repo), str(clone))
    git(clone, "sparse-checkout", "set", "--no-cone", "/*", "!/.gitlab/")
    assert not (clone / ".gitlab").exists()
    assert BUILD_FILE in git(clone, "ls-files").split()  # tracked, absent
    return clone


def test_check_names_the_missing_tracked_file(sparse: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", sparse, "image", "check")
    assert result.code == 1
    assert f"{BUILD_FILE}: tracked by git but absent from the work tree" in result.out
    payload = json.loads(run_cli("--repo", sparse, "--json", "image", "check").out)
    assert [f["kind"] for f in payload["findings"]] == ["not-checked-out"]


def test_bump_refuses_and_changes_nothing(sparse: Path, run_cli: RunCli) -> None:
    before = snapshot(sparse)
    for lane in ((), ("--lts",)):
        result = run_cli("--repo", sparse, "image", "bump", "26.07-py3", "--offline", *lane)
        assert result.code == 2
        assert result.err.startswith(f"error: {BUILD_FILE}: tracked by git but absent")
        assert "nothing was changed" in result.err
    assert snapshot(sparse) == before
    assert git(sparse, "status", "--porcelain") == ""
