"""`uvdock merge-driver install`: a real merge stops on uv.lock with no conflict markers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import RunCli, commit_all, git

from uvdock.lock import lockfile

LOCK = 'version = 1\n\n[[package]]\nname = "a"\nversion = "{}"\n'


def diverged(make_repo: Callable[..., Path]) -> Path:
    repo = make_repo({"uv.lock": LOCK.format("1.0"), "README": "x\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "uv.lock").write_text(LOCK.format("2.0"))
    commit_all(repo, "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "uv.lock").write_text(LOCK.format("3.0"))
    commit_all(repo, "main")
    return repo


def test_install_then_merge_keeps_a_clean_side(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = diverged(make_repo)
    result = run_cli("--repo", repo, "merge-driver", "install")
    assert result.code == 0, result.err
    attributes = (repo / ".git" / "info" / "attributes").read_text()
    assert attributes.splitlines().count("uv.lock merge=uvdock-lock") == 1
    assert git(repo, "config", "--local", "merge.uvdock-lock.driver").strip()
    assert git(repo, "status", "--porcelain") == ""  # nothing tracked changed

    git(repo, "merge", "feature", check=False)
    text = (repo / "uv.lock").read_text()
    assert text == LOCK.format("3.0")  # ours, untouched, parseable
    assert not lockfile.has_conflict_markers(text)
    stages = [line.split()[2] for line in git(repo, "ls-files", "-u", "uv.lock").splitlines()]
    assert stages == ["1", "2", "3"]  # git still stops: `uvdock lock resolve` finishes


def test_rebase_also_stops_without_markers(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = diverged(make_repo)
    assert run_cli("--repo", repo, "merge-driver", "install").code == 0
    git(repo, "checkout", "-q", "feature")
    git(repo, "rebase", "main", check=False)
    assert not lockfile.has_conflict_markers((repo / "uv.lock").read_bytes())
    assert git(repo, "ls-files", "-u", "uv.lock").count("\n") == 3


def test_install_is_idempotent_and_keeps_existing_attributes(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({"uv.lock": LOCK.format("1.0")})
    attributes = repo / ".git" / "info" / "attributes"
    attributes.parent.mkdir(parents=True, exist_ok=True)
    attributes.write_text("*.bin binary")  # no final newline
    assert run_cli("--repo", repo, "merge-driver", "install").code == 0
    first = attributes.read_text()
    assert first == "*.bin binary\nuv.lock merge=uvdock-lock\n"
    again = run_cli("--repo", repo, "--json", "merge-driver", "install")
    assert json.loads(again.out)["changed"] is False
    assert attributes.read_text() == first


def test_dry_run_changes_nothing(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({"uv.lock": LOCK.format("1.0")})
    config_before = (repo / ".git" / "config").read_bytes()
    result = run_cli("--repo", repo, "--dry-run", "merge-driver", "install")
    assert result.code == 0
    assert "merge.uvdock-lock.driver" in result.out
    assert "+uv.lock merge=uvdock-lock" in result.out
    assert (repo / ".git" / "config").read_bytes() == config_before
    assert (
        not (repo / ".git" / "info" / "attributes").exists()
        or "uvdock" not in (repo / ".git" / "info" / "attributes").read_text()
    )
