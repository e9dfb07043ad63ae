"""Ordinary OS failures are exit 3 naming the path and cause, never exit 4 (issue 12 §5).

The failures are real: an immutable file (chattr +i), a read-only bind mount, a file size
limit (RLIMIT_FSIZE, which makes writes fail with EFBIG since Python ignores SIGXFSZ).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunCli, commit_all
from samples.lock_conflicts import make_conflict
from samples.recipes import MODEL, RECIPES

from uvdock.files import state_store

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="chattr and mount need root")

REQ = "docker/lts/requirements.txt"


def _temp_files(repo: Path) -> list[str]:
    return [str(p) for p in repo.rglob("*.uvdock") if ".git" not in p.parts]


@pytest.fixture
def immutable() -> Iterator[list[Path]]:
    """Paths to make immutable; the attribute is cleared again at the end."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        subprocess.run(["chattr", "-i", str(path)], check=False)


def _freeze(paths: list[Path], path: Path) -> None:
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("this filesystem has no immutable attribute")
    paths.append(path)


@root_only
def test_lts_pin_on_an_immutable_file_is_exit_3(
    megatron_repo: Path, run_cli: RunCli, immutable: list[Path]
) -> None:
    target = megatron_repo / REQ
    before = target.read_bytes()
    _freeze(immutable, target)
    result = run_cli("--repo", megatron_repo, "lts", "pin", "einops==9.9.9", "--lts")
    assert result.code == 3, result.err
    assert f"{target}: cannot replace: Operation not permitted" in result.err
    assert target.read_bytes() == before and _temp_files(megatron_repo) == []


@root_only
def test_mark_broken_in_a_read_only_folder_is_exit_3(
    make_repo: object, tmp_path: Path, run_cli: RunCli
) -> None:
    from conftest import init_repo

    repo = init_repo(tmp_path / "repo")
    folder = repo / RECIPES
    folder.mkdir(parents=True)
    (folder / "model.yaml").write_text(MODEL)
    commit_all(repo)
    if subprocess.run(["mount", "--bind", str(folder), str(folder)]).returncode != 0:
        pytest.skip("cannot bind-mount here")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
        result = run_cli(
            "--repo", repo, "recipe", "mark-broken", "alpha", "--issue", "1", "--reason", "x"
        )
    finally:
        subprocess.run(["umount", str(folder)], check=True)
    assert result.code == 3, result.err
    assert "model.yaml: cannot write: Read-only file system" in result.err
    assert (folder / "model.yaml").read_text() == MODEL and _temp_files(repo) == []


def test_image_bump_past_the_file_size_limit_is_exit_3(megatron_repo: Path) -> None:
    """A full disk, as far as the writer can tell: the Dockerfile cannot be written."""
    limit = (megatron_repo / "docker" / "Dockerfile.ci.dev").stat().st_size // 2
    script = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from uvdock.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    before = {p: p.read_bytes() for p in (megatron_repo / "docker").iterdir() if p.is_file()}
    done = subprocess.run(
        [sys.executable, "-c", script, "--repo", str(megatron_repo), "image", "bump", "26.09-py3"],
        capture_output=True,
        text=True,
        env={**os.environ, "UVDOCK_OFFLINE": "1"},
    )
    assert done.returncode == 3, done.stderr
    assert "Dockerfile.ci.dev: cannot write: File too large" in done.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert _temp_files(megatron_repo) == []


@root_only
def test_a_resolve_whose_restore_fails_says_what_to_run_and_keeps_the_state(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli, immutable: list[Path]
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    lock = conflict.repo / "uv.lock"
    before = lock.read_bytes()
    _freeze(immutable, lock)  # neither the relock nor the restore can write it
    result = run_cli(
        "--repo",
        conflict.repo,
        "--engine",
        "local",
        "lock",
        "resolve",
        "--onto",
        "main",
        "--no-fetch",
    )
    assert result.code == 3, result.err
    assert "could not restore uv.lock" in result.err
    assert "run `uvdock lock resolve --abort`" in result.err
    git_dir = conflict.repo / ".git"
    assert state_store.load(git_dir) is not None
    subprocess.run(["chattr", "-i", str(lock)], check=True)
    result = run_cli("--repo", conflict.repo, "lock", "resolve", "--abort")
    assert result.code == 0, result.err
    assert lock.read_bytes() == before and state_store.load(git_dir) is None
    assert _temp_files(conflict.repo) == []


@pytest.mark.parametrize(
    ("files", "env", "fragment"),
    [
        ({"uvdock.toml": b"image = '\xff'\n"}, {}, "uvdock.toml: not valid TOML"),
        ({"pyproject.toml": b"tool = 1  # uvdock\n"}, {}, "`tool` must be a table"),
        ({}, {"UVDOCK_PROTECTED_PACKAGES": "torch 'triton"}, "No closing quotation"),
        ({"uvdock.toml": b"recipes-dir = '/etc'\n"}, {}, "`recipes-dir`"),
    ],
)
def test_bad_configuration_is_exit_2_on_the_command_line(
    files: dict[str, bytes],
    env: dict[str, str],
    fragment: str,
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, data in files.items():
        (megatron_repo / name).write_bytes(data)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = run_cli("--repo", megatron_repo, "recipe", "show", "ckpt_converter")
    assert result.code == 2, result.err
    assert fragment in result.err


def test_a_malformed_ipv6_remote_is_exit_2(megatron_repo: Path, run_cli: RunCli) -> None:
    subprocess.run(
        ["git", "-C", str(megatron_repo), "remote", "add", "gitlab", "https://[::1/group/x.git"],
        check=True,
    )
    result = run_cli("--repo", megatron_repo, "--dry-run", "image", "pull")
    assert result.code == 2, result.err
    assert "malformed" in result.err


def test_a_full_disk_when_the_repository_lock_is_taken_names_the_lock_file(
    megatron_repo: Path,
) -> None:
    """No room for even the lock's note (pid and command): exit 3 naming the file, not a bare
    "No space left on device" that leaves the user guessing which disk."""
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))\n"
        "from uvdock.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    before = (megatron_repo / "docker" / "lts" / "requirements.txt").read_bytes()
    pin = ["lts", "pin", "--lts", "tqdm==4.67.4"]
    done = subprocess.run(
        [sys.executable, "-c", script, "--repo", str(megatron_repo), *pin],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3, done.stderr
    assert ".git/uvdock/lock: cannot" in done.stderr and "File too large" in done.stderr
    assert (megatron_repo / "docker" / "lts" / "requirements.txt").read_bytes() == before
