"""Issue 29, item 6: only regular files are read from a repository, each within a size limit.

A committed symlink to /dev/zero, a FIFO, a socket or a file past the limit of its kind, in
the place of each file uvdock reads: exit 2 at once naming the file, never a hang and never
memory filling up. uvdock runs as a child with a memory cap and a time limit, so a regression
fails the test instead of taking the machine.
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import commit_all, git

from uvdock.errors import InputRefused
from uvdock.files import textlines
from uvdock.run import git as run_git

RECIPE = "tests/test_utils/recipes/h100/evil.yaml"
MEMORY_CAP = 1 << 30


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _uvdock(repo: Path, *words: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UVDOCK_")}
    env["UVDOCK_OFFLINE"] = "1"
    started = time.monotonic()
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), *words]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=30, preexec_fn=_capped
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"uvdock {' '.join(words)} still ran after 30 s")
    return done, time.monotonic() - started


def _zero(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/zero")


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _socket(path: Path) -> None:
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    os.chdir(path.parent)  # a socket's path is limited to about 100 bytes; its name is not
    try:
        listener.bind(path.name)  # left bound: the file stays a socket for the test's length
    finally:
        os.chdir(here)
    _SOCKETS.append(listener)


def _huge(path: Path) -> None:
    with path.open("ab") as fh:  # sparse: no disk is spent
        fh.truncate(textlines.LOCK_LIMIT + 1)


_SOCKETS: list[socket.socket] = []
MAKERS: dict[str, Callable[[Path], None]] = {
    "dev-zero": _zero,
    "fifo": _fifo,
    "socket": _socket,
    "too-large": _huge,
}

# (the file, a command that reads it)
READS = [
    ("pyproject.toml", ("--dry-run", "sync", "--engine", "local")),
    ("pyproject.toml", ("--dry-run", "lock", "--engine", "local")),
    ("pyproject.toml", ("image", "check")),
    ("uvdock.toml", ("image", "check")),
    ("docker/Dockerfile.ci.dev", ("image", "show")),
    ("docker/Dockerfile.ci.dev", ("--dry-run", "image", "build", "--engine", "podman")),
    ("docker/.ngc_version.dev", ("image", "check")),
    ("docker/lts/requirements.txt", ("lts", "show")),
    (RECIPE, ("recipe", "show")),
    (".gitlab/stages/01.build.yml", ("image", "check")),
    (".github/workflows/ci.yml", ("image", "show")),
    ("uv.lock", ("lock", "diff", "HEAD")),
    ("uv.lock", ("lts", "drift")),
]


@pytest.fixture(autouse=True)
def _close_sockets() -> Iterator[None]:
    yield
    while _SOCKETS:
        _SOCKETS.pop().close()


@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize("target,words", READS, ids=lambda v: v if isinstance(v, str) else "")
def test_a_special_or_huge_file_is_refused_at_once_naming_it(
    kind: str, target: str, words: tuple[str, ...], megatron_repo: Path
) -> None:
    path = megatron_repo / target
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "too-large" and target != "uv.lock":
        path.write_text("")  # past the limit of its kind, well below the lock's
    MAKERS[kind](path)
    if kind == "too-large" and target != "uv.lock":
        with path.open("ab") as fh:
            fh.truncate(textlines.TEXT_LIMIT + 1)
    done, took = _uvdock(megatron_repo, *words)
    assert done.returncode == 2, f"{took:.1f} s\n{done.stdout}{done.stderr}"
    assert "Traceback" not in done.stderr
    assert target in done.stderr.splitlines()[0], done.stderr
    assert took < 10


def test_a_saved_resolve_state_linked_to_dev_zero_is_refused(megatron_repo: Path) -> None:
    folder = megatron_repo / ".git" / "uvdock" / "resolve-state"
    folder.mkdir(parents=True)
    _zero(folder / "state.json")
    done, took = _uvdock(megatron_repo, "lock", "resolve", "--abort")
    assert done.returncode == 2, done.stderr
    assert "state.json" in done.stderr and took < 10


def test_the_reader_takes_a_regular_file_through_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_bytes(b"a = 1\r\nb = 2")
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    assert textlines.read_text(link) == "a = 1\r\nb = 2"
    with pytest.raises(IsADirectoryError):
        textlines.read_bytes(tmp_path)
    with pytest.raises(FileNotFoundError):
        textlines.read_bytes(tmp_path / "absent")


def test_a_committed_symlink_to_dev_zero_as_git_stores_it(megatron_repo: Path) -> None:
    """The recipe arrives as a user gets it: committed as a symlink, checked out by git."""
    _zero(megatron_repo / RECIPE)
    commit_all(megatron_repo, "add a recipe")
    clone = megatron_repo.parent / "clone"
    git(megatron_repo.parent, "clone", "-q", str(megatron_repo), str(clone))
    assert (clone / RECIPE).is_symlink()
    done, took = _uvdock(clone, "recipe", "show")
    assert done.returncode == 2 and "evil.yaml" in done.stderr, done.stderr
    assert "character device" in done.stderr and took < 10


def _commit_blob(repo: Path, branch: str, path: str, size: int) -> str:
    """A commit on `branch` whose `path` is `size` zero bytes; git stores it in kilobytes."""
    zeros = (
        subprocess.run(
            ["git", "-C", str(repo), "hash-object", "-w", "--stdin"],
            input=bytes(size),
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{zeros},{path}")
    git(repo, "commit", "-q", "-m", "a blob past the limit")
    git(repo, "branch", branch)
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    return zeros


@pytest.mark.parametrize(
    "words", [("lock", "diff", "evil"), ("lts", "drift", "--base", "evil")], ids=" ".join
)
def test_a_committed_lock_past_the_limit_is_refused_before_it_is_read(
    words: tuple[str, ...], megatron_repo: Path
) -> None:
    _commit_blob(megatron_repo, "evil", "uv.lock", textlines.LOCK_LIMIT + 1)
    done, took = _uvdock(megatron_repo, *words)
    assert done.returncode == 2, done.stderr
    first = done.stderr.splitlines()[0]
    assert "evil:uv.lock: larger than the 64 MiB" in first, done.stderr
    assert "Traceback" not in done.stderr and took < 10


def test_an_index_blob_past_the_limit_of_its_kind_is_refused(megatron_repo: Path) -> None:
    sha = _commit_blob(megatron_repo, "evil", "pyproject.toml", textlines.TEXT_LIMIT + 1)
    with pytest.raises(InputRefused, match=r"pyproject.toml \(stage 3\): larger than the 4 MiB"):
        run_git.blob_bytes(megatron_repo, sha, textlines.TEXT_LIMIT, "pyproject.toml (stage 3)")
    assert len(run_git.blob_bytes(megatron_repo, sha)) == textlines.TEXT_LIMIT + 1
