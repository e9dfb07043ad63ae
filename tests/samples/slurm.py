"""Helpers of the slurm test tier (tests/slurm/): a tiny project locking `six`, uvdock run
as a process (for signals and other users), and what Slurm and enroot hold afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import GIT_ENV

ENROOT_DATA = Path(os.environ.get("UVDOCK_TEST_ENROOT_DATA", "/tmp/enroot-data"))
SIX_PYPROJECT = """\
[project]
name = "tiny"
version = "0"
requires-python = ">=3.8"
dependencies = ["six"]
"""


TEST_USER_PREFIX = "uvds"  # the cluster users the tier creates: uvds<pid>


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int
    python: str = sys.executable  # an interpreter this user may execute
    pythonpath: str = ""  # where it finds uvdock and its dependencies


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


def six_repo(parent: Path, owner: User | None = None) -> Path:
    """A committed git repository of a tiny project locking `six`, owned by `owner`."""
    repo = parent / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "pyproject.toml").write_text(SIX_PYPROJECT)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tiny project")
    (parent / "home").mkdir()
    if owner is not None:
        for path in [parent, *parent.rglob("*")]:
            os.lchown(path, owner.uid, owner.gid)
    return repo


@dataclass
class Run:
    code: int
    out: str
    err: str


def uvdock_env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        **GIT_ENV,
        **extra,
    }
    # The machine's network settings reach the container through srun's environment (a
    # TLS-intercepting proxy's CA is bound in by enroot; SSL_CERT_FILE makes uv trust it).
    passed = ("SLURM_CONF", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy")
    for key in (*passed, "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        if key in os.environ:
            env.setdefault(key, os.environ[key])
    return env


def uvdock_argv(args: Sequence[str | Path], user: User | None = None, home: str = "") -> list[str]:
    if user is None:
        return [sys.executable, "-m", "uvdock", *(str(a) for a in args)]
    # runuser sets HOME from the password database: set it again for the command.
    pythonpath = [f"PYTHONPATH={user.pythonpath}"] if user.pythonpath else []
    argv = ["env", f"HOME={home}", *pythonpath, user.python, "-m", "uvdock"]
    argv += [str(a) for a in args]
    return ["runuser", "-u", user.name, "--", *argv]


def python_for(user: str) -> tuple[str, str] | None:
    """(interpreter, PYTHONPATH) that runs this checkout's uvdock as `user`: the test's own
    Python when the user may execute it (uv's managed Pythons often live under /root),
    else the system's of the same version, with the virtualenv's packages on the path."""
    import sysconfig

    def works(python: str, path: str) -> bool:
        probe = ["runuser", "-u", user, "--", "env", f"PYTHONPATH={path}", python]
        done = subprocess.run(
            [*probe, "-c", "import uvdock.cli.main, yaml"], capture_output=True, check=False
        )
        return done.returncode == 0

    if works(sys.executable, ""):
        return sys.executable, ""
    src = Path(__file__).resolve().parents[2] / "src"
    path = f"{src}:{sysconfig.get_paths()['purelib']}"
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if os.access(python, os.X_OK) and works(python, path):
            return python, path
    return None


def uvdock(
    repo: Path,
    *args: str | Path,
    user: User | None = None,
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> Run:
    """`uvdock --repo REPO --engine srun ARGS` as a process (as `user` when given)."""
    done = subprocess.run(
        uvdock_argv(["--repo", repo, "--engine", "srun", *args], user, str(repo.parent / "home")),
        cwd=repo,
        env=uvdock_env(repo.parent / "home", **(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def jobs_left(within: float = 10.0) -> list[str]:
    """uvdock's jobs still in squeue after `within` seconds: a cancelled or finished job stays
    listed (COMPLETING) while slurmd reaps its step, for a moment after uvdock has exited."""
    import time

    deadline = time.monotonic() + within
    while (jobs := jobs_named()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return jobs


def jobs_named(prefix: str = "uvdock-") -> list[str]:
    """uvdock's jobs of this run's users (the one running the tests, and the cluster users
    they create): another user's uvdock on the same cluster is neither counted nor cancelled."""
    import getpass

    out = subprocess.run(
        ["squeue", "--noheader", "--all", "--format=%u %j"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    ours = (getpass.getuser(), TEST_USER_PREFIX)
    return [
        job
        for user, _, job in (line.partition(" ") for line in out.splitlines())
        if job.startswith(prefix) and user.startswith(ours)
    ]


def unpacked(uid: int = 0) -> list[str]:
    """The pyxis containers under enroot's data path for `uid`."""
    folder = ENROOT_DATA / f"user-{uid}"
    return sorted(p.name for p in folder.glob("pyxis_*")) if folder.is_dir() else []


def remove_unpacked(names: Sequence[str], uid: int = 0) -> None:
    for name in names:
        shutil.rmtree(ENROOT_DATA / f"user-{uid}" / name, ignore_errors=True)


def fresh_sqsh(sqsh: Path, folder: Path) -> Path:
    """A copy of the test image: a new identity, so its reusable container is new too."""
    copy = folder / "image.sqsh"
    shutil.copyfile(sqsh, copy)
    copy.chmod(0o644)
    return copy


def conflict_on_srun(workdir: Path, wheels: Path, sqsh: Path) -> tuple[Any, Any]:
    """A real uv.lock merge conflict (samples/lock_conflicts.py) in `workdir`, the reusable
    container already unpacked for it; returns it and its snapshot."""
    from samples.lock_conflicts import make_conflict, snapshot

    conflict = make_conflict(workdir, wheels, "merge")
    (workdir / "home").mkdir(exist_ok=True)
    ready = uvdock(conflict.repo, "--image", sqsh, "run", "--", "true")
    assert ready.code == 0, ready.err
    return conflict, snapshot(conflict.repo)
