"""The repository lock: one writer at a time, bounded wait, refusal naming the holder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import RunCli
from samples.lock_conflicts import make_conflict, snapshot

from uvdock.errors import InputRefused
from uvdock.files import repolock, state_store

HOLD = """
import sys, time
from pathlib import Path
from uvdock.files import repolock
with repolock.held(Path(sys.argv[1]), sys.argv[2], 5):
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
"""


@pytest.fixture
def holder() -> Iterator[Callable[[Path, str, float], subprocess.Popen[str]]]:
    """Another process holding the lock at PATH as COMMAND for SECONDS."""
    started: list[subprocess.Popen[str]] = []

    def start(path: Path, command: str, seconds: float) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(path), command, str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def test_a_held_lock_is_refused_after_the_wait_naming_command_and_pid(
    tmp_path: Path, holder: Callable[[Path, str, float], subprocess.Popen[str]]
) -> None:
    path = tmp_path / "uvdock" / "lock"
    other = holder(path, "uvdock image bump", 30)
    started = time.monotonic()
    with pytest.raises(InputRefused) as info, repolock.held(path, "uvdock lts pin", 0.5):
        pass
    waited = time.monotonic() - started
    assert 0.5 <= waited < 5
    assert f"locked by `uvdock image bump` (pid {other.pid})" in info.value.message
    assert info.value.exit_code == 2


def test_a_lock_freed_during_the_wait_is_taken(
    tmp_path: Path, holder: Callable[[Path, str, float], subprocess.Popen[str]]
) -> None:
    path = tmp_path / "lock"
    holder(path, "uvdock image bump", 0.5)
    with repolock.held(path, "uvdock lts pin", 10) as stale:
        assert stale is None  # released properly: an empty note
        assert path.read_text() == f"{os.getpid()} uvdock lts pin\n"
    assert path.read_text() == ""


def test_a_killed_holder_leaves_a_note_and_no_lock(
    tmp_path: Path, holder: Callable[[Path, str, float], subprocess.Popen[str]]
) -> None:
    path = tmp_path / "lock"
    killed = holder(path, "uvdock lock resolve", 60)
    killed.kill()
    killed.wait()
    started = time.monotonic()
    with repolock.held(path, "uvdock lock resolve --abort", 10) as stale:
        assert stale == repolock.Holder(killed.pid, "uvdock lock resolve")
    assert time.monotonic() - started < 1  # taken over at once, no wait


def test_the_lock_is_reentrant_within_one_process(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    with repolock.held(path, "outer", 0):
        with repolock.held(path, "inner", 0):
            pass
        assert path.read_text().endswith(" outer\n")


def test_a_writing_command_waits_then_refuses(
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    holder: Callable[[Path, str, float], subprocess.Popen[str]],
) -> None:
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")
    monkeypatch.setenv("UVDOCK_LOCK_TIMEOUT", "1")
    other = holder(megatron_repo / ".git" / "uvdock" / "lock", "uvdock image bump --lts", 30)
    pin = (megatron_repo / "docker" / ".ngc_version.dev").read_bytes()
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.09-py3")
    assert result.code == 2
    assert f"`uvdock image bump --lts` (pid {other.pid}); waited 1 s" in result.err
    assert (megatron_repo / "docker" / ".ngc_version.dev").read_bytes() == pin
    # reading commands and --dry-run take no lock
    assert run_cli("--repo", megatron_repo, "image", "check").code == 0
    assert run_cli("--repo", megatron_repo, "--dry-run", "image", "bump", "26.09-py3").code == 0


def test_abort_is_refused_while_a_live_run_holds_the_lock(
    wheelhouse: Path,
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    holder: Callable[[Path, str, float], subprocess.Popen[str]],
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    git_dir = conflict.repo / ".git"
    monkeypatch.setenv("UVDOCK_LOCK_TIMEOUT", "0")
    # a live run that has saved its state and is relocking
    from uvdock.commands.lock.resolve import RepoIndex

    state_store.save(RepoIndex(conflict.repo), "uv.lock", ref="main", operation="merge")
    before = snapshot(conflict.repo)
    other = holder(git_dir / "uvdock" / "lock", "uvdock lock resolve", 30)
    result = run_cli("--repo", conflict.repo, "lock", "resolve", "--abort")
    assert result.code == 2
    assert f"`uvdock lock resolve` (pid {other.pid})" in result.err
    assert snapshot(conflict.repo) == before
    assert state_store.load(git_dir) is not None
    other.kill()
    other.wait()
    result = run_cli("--repo", conflict.repo, "lock", "resolve", "--abort")
    assert result.code == 0, result.err
    assert state_store.load(git_dir) is None
