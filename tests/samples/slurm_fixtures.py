"""Fixtures of the slurm tier (tests/slurm/; loaded by tests/conftest.py): a real Slurm + pyxis + enroot cluster (.ci/slurm-setup), the test image
as a .sqsh, uvdock started as a process (signals, other users) in a repo of its own.

Skips with the reason where the cluster is absent; fails instead under
UVDOCK_REQUIRE_SLURM=1 (CI). The tests share one node and one enroot data path, so they
run one at a time (a file lock, whatever xdist does) and each cleans what it created.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from samples import slurm_nodes
from samples.slurm import (
    ENROOT_DATA,
    TEST_USER_PREFIX,
    User,
    jobs_named,
    python_for,
    remove_unpacked,
    unpacked,
)
from samples.slurm_nodes import Cluster

SQSH = Path(os.environ.get("UVDOCK_TEST_SQSH", "/tmp/slurm-setup/images/uvdock-test.sqsh"))
REQUIRED = os.environ.get("UVDOCK_REQUIRE_SLURM") == "1"
_SERIAL_LOCK = Path(tempfile.gettempdir()) / "uvdock-slurm-tier.lock"


def _missing_reason() -> str | None:
    for tool in ("srun", "scontrol", "enroot"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (run .ci/slurm-setup as root)"
    ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, check=False)
    if " is UP" not in ping.stdout:
        return "slurmctld is not answering (run .ci/slurm-setup as root)"
    helptext = subprocess.run(["srun", "--help"], capture_output=True, text=True, check=False)
    if "--container-image" not in helptext.stdout:
        return "srun has no --container-image: pyxis is not loaded (run .ci/slurm-setup)"
    if not SQSH.is_file():
        return f"no test image {SQSH} (run .ci/slurm-setup, or set UVDOCK_TEST_SQSH)"
    return None


@pytest.fixture(scope="session")
def sqsh() -> Path:
    """The test image as enroot .sqsh; skips (fails under UVDOCK_REQUIRE_SLURM=1) without a
    cluster. The containers unpacked from it are per checkout: slurm_tmp removes them."""
    reason = _missing_reason()
    if reason:
        if REQUIRED:
            pytest.fail(f"UVDOCK_REQUIRE_SLURM=1 but {reason}")
        pytest.skip(reason)
    return SQSH


@contextlib.contextmanager
def _serial() -> Iterator[None]:
    with _SERIAL_LOCK.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.fixture
def slurm_serial() -> Iterator[None]:
    """One slurm test at a time across xdist workers (they share the node and enroot's
    data path); what a failed test left in squeue is cancelled."""
    with _serial():
        try:
            yield
        finally:
            for job in jobs_named():
                subprocess.run(["scancel", f"--name={job}"], capture_output=True, check=False)


@pytest.fixture(scope="session")
def cluster_user(sqsh: Path) -> Iterator[User]:
    """A non-root user created for the run (the normal case on a cluster), removed after."""
    if os.getuid() != 0:
        pytest.skip("creating a test user needs root")
    name = f"{TEST_USER_PREFIX}{os.getpid() % 100000}"
    subprocess.run(
        ["useradd", "--no-create-home", "--home-dir", "/nonexistent", name],
        check=True,
        capture_output=True,
    )
    entry = pwd.getpwnam(name)
    try:
        python = python_for(name)
        if python is None:
            pytest.fail(f"no Python that user {name} may execute runs uvdock")
        yield User(name, entry.pw_uid, entry.pw_gid, *python)
    finally:
        subprocess.run(["scancel", f"--user={name}"], capture_output=True, check=False)
        shutil.rmtree(ENROOT_DATA / f"user-{entry.pw_uid}", ignore_errors=True)
        subprocess.run(["userdel", name], capture_output=True, check=False)


@pytest.fixture
def slurm_tmp(slurm_serial: None) -> Iterator[Path]:
    """A folder every user can enter (pytest's tmp_path is root's alone), removed after,
    with the containers the test's checkouts unpacked (they are keyed by checkout)."""
    before = set(unpacked())
    path = Path(tempfile.mkdtemp(prefix="uvdock-slurm-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
    remove_unpacked(sorted(set(unpacked()) - before))


@pytest.fixture(scope="session")
def two_nodes(sqsh: Path) -> Cluster:
    """The two-node cluster (../shared/slurm/multinode.sh); skips without it, fails instead
    when CI brought it up (UVDOCK_REQUIRE_SLURM=1 and UVDOCK_REQUIRE_SLURM_NODES=2)."""
    reason = slurm_nodes.missing_reason()
    if reason:
        if REQUIRED and os.environ.get("UVDOCK_REQUIRE_SLURM_NODES") == "2":
            pytest.fail(f"UVDOCK_REQUIRE_SLURM_NODES=2 but {reason}")
        pytest.skip(reason)
    return Cluster(slurm_nodes.MN_DIR / "slurm.conf")


@pytest.fixture
def cluster(two_nodes: Cluster, slurm_tmp: Path) -> Iterator[Cluster]:
    """The two-node cluster for one test: the containers it unpacked on either node and
    the jobs it left are removed after."""
    before = {node: set(slurm_nodes.unpacked_on(node)) for node in slurm_nodes.NODES}
    yield two_nodes
    for job in slurm_nodes.jobs(two_nodes):
        subprocess.run(
            ["scancel", job.split()[0]],
            env={**os.environ, **two_nodes.env},
            capture_output=True,
            check=False,
        )
    for node in slurm_nodes.NODES:
        slurm_nodes.remove_on(node, sorted(set(slurm_nodes.unpacked_on(node)) - before[node]))
