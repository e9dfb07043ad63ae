"""Helpers of the slurm tier's two-node tests: the cluster of ../shared/slurm/multinode.sh
(nodes n1 and n2 in namespaces of their own, each with its own enroot data; one shared
filesystem), a project that locks from wheels inside it (the nodes have no network), and
uvdock started inside an allocation of both nodes (`salloc -N2`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from samples.slurm import Run, User, git, uvdock_argv, uvdock_env
from samples.wheels import project_pyproject

MN_DIR = Path(os.environ.get("UVDOCK_TEST_MULTINODE", "/tmp/slurm-setup/multinode"))
NODES = ("n1", "n2")


@dataclass(frozen=True)
class Cluster:
    conf: Path

    @property
    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf)}


def missing_reason() -> str | None:
    conf = MN_DIR / "slurm.conf"
    if not conf.is_file():
        return f"no two-node cluster: {conf} is missing (run ../shared/slurm/multinode.sh up)"
    listed = subprocess.run(
        ["sinfo", "--noheader", "--Node", "--responding", "--format=%N"],
        env={**os.environ, "SLURM_CONF": str(conf)},
        capture_output=True,
        text=True,
        check=False,
    )
    if sorted(set(listed.stdout.split())) != list(NODES):
        return f"the two-node cluster does not answer (sinfo: {listed.stdout.split()}): multinode.sh up"
    return None


def wheel_repo(parent: Path, wheels: Path, owner: User | None = None) -> Path:
    """A committed project locking `alpha` (dev group: beta; test group: gamma) from
    ./wheels, which the containers see at /workspace/wheels."""
    repo = parent / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    text = project_pyproject(["alpha"], groups={"dev": ["beta"], "test": ["gamma"]})
    (repo / "pyproject.toml").write_text(text)
    shutil.copytree(wheels, repo / "wheels")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tiny project")
    (parent / "home").mkdir(exist_ok=True)
    if owner is not None:
        for path in [parent, *parent.rglob("*")]:
            os.lchown(path, owner.uid, owner.gid)
    return repo


def unpacked_on(node: str, uid: int = 0) -> list[str]:
    """The pyxis containers in `node`'s own enroot data path."""
    folder = MN_DIR / node / "enroot-data" / f"user-{uid}"
    return sorted(p.name for p in folder.glob("pyxis_*")) if folder.is_dir() else []


def remove_on(node: str, names: list[str], uid: int = 0) -> None:
    for name in names:
        shutil.rmtree(MN_DIR / node / "enroot-data" / f"user-{uid}" / name, ignore_errors=True)


def argv(repo: Path, *args: str | Path, user: User | None = None, allocation: int = 0) -> list[str]:
    """uvdock on the srun engine, inside `salloc -N<allocation>` when given (as `user`:
    the allocation is theirs)."""
    words = uvdock_argv(
        ["--repo", repo, "--engine", "srun", *args], user, str(repo.parent / "home")
    )
    if not allocation:
        return words
    salloc = ["salloc", "--quiet", f"--nodes={allocation}"]
    if user is None:
        return [*salloc, *words]
    runuser, command = words[:4], words[4:]  # runuser -u NAME --, then the command
    return [*runuser, *salloc, *command]


def uvdock(
    cluster: Cluster,
    repo: Path,
    *args: str | Path,
    user: User | None = None,
    allocation: int = 0,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> Run:
    done = subprocess.run(
        argv(repo, *args, user=user, allocation=allocation),
        cwd=repo,
        env=uvdock_env(repo.parent / "home", **cluster.env, **(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def jobs(cluster: Cluster) -> list[str]:
    """Every job of the two-node cluster still listed (the tests own it: all of them)."""
    out = subprocess.run(
        ["squeue", "--noheader", "--format=%i %j %T"],
        env={**os.environ, **cluster.env},
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.splitlines()


def jobs_left(cluster: Cluster, within: float = 15.0) -> list[str]:
    import time

    deadline = time.monotonic() + within
    while (listed := jobs(cluster)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return listed
