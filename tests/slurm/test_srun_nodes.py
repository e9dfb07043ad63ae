"""An allocation of many nodes is one environment (issue 31), on a real two-node cluster
(../shared/slurm/multinode.sh: n1 and n2 with their own enroot data, one shared filesystem):
writes run once, `sync` reaches the container on every node, `run` follows the allocation,
and the unpacked-container record is per node."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from samples.slurm import User, uvdock_env
from samples.slurm_nodes import Cluster, argv, jobs_left, unpacked_on, uvdock, wheel_repo

from uvdock.run import slurm, slurm_steps

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]

IMPORTS = "import alpha, beta, gamma, os; print(os.environ['SLURMD_NODENAME'])"


def _resolved(err: str) -> int:
    """How many times uv resolved: once per task that ran it."""
    return sum(line.startswith("Resolved ") for line in err.splitlines())


def _name(repo: Path, sqsh: Path, uid: int = 0) -> str:
    return slurm.PYXIS_PREFIX + slurm.container_name(str(sqsh), repo, uid)


def test_writes_run_once_sync_reaches_every_node_run_follows(
    cluster: Cluster, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    repo = wheel_repo(slurm_tmp, wheelhouse)
    name = _name(repo, sqsh)
    image = ("--image", sqsh)
    locked = uvdock(cluster, repo, *image, "lock", allocation=2)
    assert locked.code == 0, locked.err
    assert _resolved(locked.err) == 1, locked.err  # one task, not one per node
    assert f"on n1, once, for reuse as {name[len(slurm.PYXIS_PREFIX) :]}" in locked.out
    assert name in unpacked_on("n1") and name not in unpacked_on("n2")
    for verb, package in (("add", "delta"), ("remove", "delta")):
        done = uvdock(cluster, repo, *image, verb, "--no-sync", package, allocation=2)
        assert done.code == 0, done.err
        assert _resolved(done.err) == 1, done.err
    synced = uvdock(cluster, repo, *image, "sync", allocation=2)
    assert synced.code == 0, synced.err
    assert "on n2, once" in synced.out and "on n1" not in synced.out  # n1 kept its unpack
    for node in ("n1", "n2"):
        assert f"{node}: environment synced (dev profile)" in synced.out
        assert name in unpacked_on(node)
    # The next steps see what sync installed, on both nodes: one writable container each.
    ran = uvdock(cluster, repo, *image, "run", "--", "python", "-c", IMPORTS, allocation=2)
    assert ran.code == 0, ran.err
    assert sorted(ran.out.split()) == ["n1", "n2"]
    # engine-args' --nodes pass through to run
    one = uvdock(
        cluster,
        repo,
        *image,
        "run",
        "--",
        "python",
        "-c",
        IMPORTS,
        allocation=2,
        env={"UVDOCK_ENGINE_ARGS": "--nodes=1"},
    )
    assert one.code == 0, one.err
    assert one.out.split() == ["n1"]
    assert jobs_left(cluster) == []


def test_outside_an_allocation_engine_args_choose_the_nodes(
    cluster: Cluster, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    repo = wheel_repo(slurm_tmp, wheelhouse)
    two = {"UVDOCK_ENGINE_ARGS": "--nodes=2"}
    locked = uvdock(cluster, repo, "--image", sqsh, "lock", env=two)
    assert locked.code == 0, locked.err
    assert _resolved(locked.err) == 1, locked.err
    synced = uvdock(cluster, repo, "--image", sqsh, "sync", env=two)
    assert synced.code == 0, synced.err
    assert "n1: environment synced" in synced.out and "n2: environment synced" in synced.out
    ran = uvdock(cluster, repo, "--image", sqsh, "run", "--", "python", "-c", IMPORTS, env=two)
    assert ran.code == 0, ran.err
    assert sorted(ran.out.split()) == ["n1", "n2"]
    assert jobs_left(cluster) == []


def test_a_users_own_container_name_replaces_uvdocks(
    cluster: Cluster, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    repo = wheel_repo(slurm_tmp, wheelhouse)
    own = f"mine{os.getpid()}"
    args = {"UVDOCK_ENGINE_ARGS": f"--container-name={own}"}
    assert uvdock(cluster, repo, "--image", sqsh, "lock", allocation=2, env=args).code == 0
    synced = uvdock(cluster, repo, "--image", sqsh, "sync", allocation=2, env=args)
    assert synced.code == 0, synced.err
    assert "specified multiple times" not in synced.err
    ran = uvdock(
        cluster, repo, "--image", sqsh, "run", "--", "python", "-c", IMPORTS, allocation=2, env=args
    )
    assert ran.code == 0, ran.err
    assert sorted(ran.out.split()) == ["n1", "n2"]
    for node in ("n1", "n2"):
        assert f"{slurm.PYXIS_PREFIX}{own}" in unpacked_on(node)  # theirs, not uvdock's
        assert _name(repo, sqsh) not in unpacked_on(node)


def test_ctrl_c_while_one_node_unpacks_removes_it_there_alone(
    cluster: Cluster, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    """n1 holds the container (a lock unpacked it); the sync's first step unpacks on n2 and
    is interrupted there: n2's half-written copy goes, n1's stays, and no job is left."""
    repo = wheel_repo(slurm_tmp, wheelhouse)
    name = _name(repo, sqsh)
    assert uvdock(cluster, repo, "--image", sqsh, "lock", allocation=2).code == 0
    child = subprocess.Popen(
        argv(repo, "--image", sqsh, "sync", allocation=2),
        cwd=repo,
        env=uvdock_env(repo.parent / "home", **cluster.env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while name not in unpacked_on("n2"):
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "no unpack on n2"
        time.sleep(0.05)
    uvdock_pid = _uvdock_under(child.pid)
    os.kill(uvdock_pid, signal.SIGINT)  # as Ctrl-C would reach it (its srun has a group of its own)
    started = time.monotonic()
    out, err = child.communicate(timeout=90)
    assert time.monotonic() - started < 45
    assert "unpacking" in out and "on n2" in out
    assert child.returncode == 130, err
    assert jobs_left(cluster) == []
    assert name not in unpacked_on("n2"), err
    assert name in unpacked_on("n1")
    record = (repo / ".git" / "uvdock" / "srun-containers").read_text()
    assert record.split() == ["n1", name[len(slurm.PYXIS_PREFIX) :]]


def _uvdock_under(salloc: int) -> int:
    """The uvdock process salloc started (the signal a terminal's Ctrl-C sends it)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                    cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == salloc and b"uvdock" in cmdline:
                    return int(entry)
        time.sleep(0.05)
    raise AssertionError("no uvdock under salloc")


def _processes() -> dict[int, tuple[int, str, str]]:
    """pid: (parent, comm, UTS namespace) of every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                uts = os.readlink(f"/proc/{entry}/ns/uts")
            except OSError:
                continue
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            found[int(entry)] = (int(stat.rsplit(")", 1)[1].split()[1]), comm, uts)
    return found


def _node_processes(node: str) -> dict[int, str]:
    """The node's slurmd, its step daemons and everything they started: pid and name."""
    slurmd = int((cluster_dir() / node / "slurmd.pid").read_text())
    table = _processes()
    uts = table[slurmd][2]
    tree = [slurmd] + [
        p for p, (_, comm, ns) in table.items() if comm == "slurmstepd" and ns == uts
    ]
    for pid in tree:
        tree += [p for p, (parent, _, _) in table.items() if parent == pid and p not in tree]
    return {pid: table[pid][1] for pid in tree}


def cluster_dir() -> Path:
    from samples.slurm_nodes import MN_DIR

    return MN_DIR


def test_a_node_that_stops_mid_sync_is_named_within_seconds(
    cluster: Cluster, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    """n2 stops answering mid-sync (SIGSTOP to its slurmd, its step and its uv: a node that
    died) while n1 finishes: uvdock names n2 and fails within seconds, not when Slurm gives
    up on the node, and leaves no srun. n2's uv is held mid-step by the lock on its venv
    (in n2's own unpacked container, seen from the host), so the stop lands mid-sync."""
    import fcntl

    repo = wheel_repo(slurm_tmp, wheelhouse)
    name = _name(repo, sqsh)
    assert uvdock(cluster, repo, "--image", sqsh, "lock", allocation=2).code == 0
    assert uvdock(cluster, repo, "--image", sqsh, "run", "--", "true", allocation=2).code == 0
    venv_lock = cluster_dir() / "n2" / "enroot-data" / "user-0" / name / "opt" / "venv" / ".lock"
    stopped: list[int] = []
    with venv_lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        child = subprocess.Popen(
            argv(repo, "--image", sqsh, "sync", allocation=2),
            cwd=repo,
            env=uvdock_env(repo.parent / "home", **cluster.env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while "uv" not in _node_processes("n2").values():
                assert child.poll() is None, child.communicate()
                assert time.monotonic() < deadline, "no uv waiting on n2"
                time.sleep(0.1)
            stopped = list(_node_processes("n2"))
            for pid in stopped:
                os.kill(pid, signal.SIGSTOP)
            started = time.monotonic()
            out, err = child.communicate(timeout=120)
            took = time.monotonic() - started
        finally:
            for pid in stopped:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGCONT)
            if child.poll() is None:
                child.kill()
    assert child.returncode == 1, (out, err)
    assert "n2: did not finish" in err
    assert "n1: did not finish" not in err and "n1: exit" not in err
    assert took < slurm_steps.STRAGGLER_SECONDS + 15, took  # and srun's own abort: KillWait 5 s + 2
    assert not [p for p, (_, comm, _) in _processes().items() if comm == "srun"]
    assert jobs_left(cluster, within=60) == []


def _sleeping(marker: str) -> list[int]:
    """The step's `sleep MARKER` processes, on either node (seen from the host)."""
    found = []
    for pid in _processes():
        with contextlib.suppress(OSError):
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if words[0].endswith(b"sleep") and words[1:2] == [marker.encode()]:
                found.append(pid)
    return found


def test_ctrl_c_mid_step_on_two_nodes_leaves_no_step_and_no_job(
    cluster: Cluster, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    """Inside an allocation a step is no job of its own (scancel --name misses it): the
    interrupt still ends it on both nodes; the kept containers stay whole on each."""
    repo = wheel_repo(slurm_tmp, wheelhouse)
    name = _name(repo, sqsh)
    assert uvdock(cluster, repo, "--image", sqsh, "run", "--", "true", allocation=2).code == 0
    marker = str(7600 + os.getpid() % 1000)
    child = subprocess.Popen(
        argv(repo, "--image", sqsh, "run", "--", "sleep", marker, allocation=2),
        cwd=repo,
        env=uvdock_env(repo.parent / "home", **cluster.env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len(_sleeping(marker)) < 2:
        assert child.poll() is None and time.monotonic() < deadline, "the step never ran"
        time.sleep(0.1)
    os.kill(_uvdock_under(child.pid), signal.SIGINT)
    started = time.monotonic()
    _out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert time.monotonic() - started < 20
    deadline = time.monotonic() + 10
    while _sleeping(marker):
        assert time.monotonic() < deadline, "the step ran on after the interrupt"
        time.sleep(0.2)
    assert jobs_left(cluster) == []
    for node in ("n1", "n2"):
        assert name in unpacked_on(node)
    record = (repo / ".git" / "uvdock" / "srun-containers").read_text().split()
    assert record == ["n1", name[len(slurm.PYXIS_PREFIX) :], "n2", name[len(slurm.PYXIS_PREFIX) :]]


def test_sigkill_to_uvdock_leaves_no_srun_and_no_job(
    cluster: Cluster, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    """srun runs in a process group of its own (a Ctrl-C reaches uvdock alone): a SIGKILLed
    uvdock must not leave it, and its step on both nodes, running on."""
    repo = wheel_repo(slurm_tmp, wheelhouse)
    two = {"UVDOCK_ENGINE_ARGS": "--nodes=2"}
    assert uvdock(cluster, repo, "--image", sqsh, "run", "--", "true", env=two).code == 0
    marker = str(7100 + os.getpid() % 1000)
    child = subprocess.Popen(
        argv(repo, "--image", sqsh, "run", "--", "sleep", marker),
        cwd=repo,
        env=uvdock_env(repo.parent / "home", **cluster.env, **two),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    deadline = time.monotonic() + 60
    while len(_sleeping(marker)) < 2:
        assert child.poll() is None and time.monotonic() < deadline, "the step never ran"
        time.sleep(0.1)
    sruns = [p for p, (parent, comm, _) in _processes().items() if parent == child.pid]
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    deadline = time.monotonic() + 15
    while (left := [p for p in sruns if Path(f"/proc/{p}").exists()]) or _sleeping(marker):
        assert time.monotonic() < deadline, f"srun {left} or the step ran on after uvdock"
        time.sleep(0.2)
    assert jobs_left(cluster) == []


def test_doctor_lists_and_prunes_every_node(
    cluster: Cluster, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    import json

    repo = wheel_repo(slurm_tmp, wheelhouse)
    name = _name(repo, sqsh)
    record = repo / ".git" / "uvdock" / "srun-containers"
    for allocation in (2, 0):  # inside `salloc -N2`: its nodes; outside: the partition's
        ran = uvdock(cluster, repo, "--image", sqsh, "run", "--", "true", allocation=2)
        assert ran.code == 0, ran.err
        assert name in unpacked_on("n1") and name in unpacked_on("n2")
        doctor = uvdock(cluster, repo, "--image", sqsh, "--json", "doctor", allocation=allocation)
        checks = {c["name"]: c for c in json.loads(doctor.out)["checks"]}
        listed = checks["srun unpacked containers"]["detail"]
        per_node = dict(part.split(": ", 1) for part in listed.split("; ") if ": " in part)
        for node in ("n1", "n2"):
            assert f"{name} (current)" in per_node[node], listed
        pruned = uvdock(cluster, repo, "--image", sqsh, "doctor", "--prune", allocation=allocation)
        assert pruned.code == 0, pruned.err
        assert f"n1: removed {name}" in pruned.out and f"n2: removed {name}" in pruned.out
        assert name not in unpacked_on("n1") and name not in unpacked_on("n2")
        assert record.read_text() == ""  # forgotten on both: the next step unpacks again
    assert jobs_left(cluster) == []


def _in_a_terminal(cluster: Cluster, repo: Path, *args: str | Path) -> tuple[int, str]:
    """uvdock with a terminal (script(1) gives it a pty, as srun --pty needs)."""
    import shlex

    command = shlex.join(argv(repo, *args))
    done = subprocess.run(
        ["script", "-qefc", command, "/dev/null"],
        cwd=repo,
        env=uvdock_env(repo.parent / "home", **cluster.env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_shell_asks_for_gpus_only_where_the_partition_has_them(
    cluster: Cluster, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    repo = wheel_repo(slurm_tmp, wheelhouse)
    name = _name(repo, sqsh)
    # Passed by hand on a partition without GPUs: one line saying what to pass, nothing run.
    refused = uvdock(cluster, repo, "--image", sqsh, "shell", "--slurm", "--gpus-per-node", "2")
    assert refused.code == 2, refused.err
    assert refused.err.strip().splitlines()[0].endswith("pass --gpus-per-node 0")
    assert "gres" in refused.err and name not in unpacked_on("n1") + unpacked_on("n2")
    # The configured default (8): not asked for there, said so; a shell of two nodes runs
    # on the first, and the second is allocated, not unpacked for nothing.
    code, said = _in_a_terminal(
        cluster, repo, "--image", sqsh, "shell", "--slurm", "--nodes", "2", "--shell", "true"
    )
    assert code == 0, said
    assert "has no GPUs: asking for none" in said
    assert "Invalid generic resource" not in said
    assert name in unpacked_on("n1") and name not in unpacked_on("n2")
    assert jobs_left(cluster) == []


def test_a_cluster_user_locks_once_and_syncs_both_nodes(
    cluster: Cluster, cluster_user: User, slurm_tmp: Path, sqsh: Path, wheelhouse: Path
) -> None:
    """Not root, in an allocation of their own: the containers are theirs on each node."""
    import shutil

    from samples.slurm_nodes import MN_DIR, NODES

    user = cluster_user
    repo = wheel_repo(slurm_tmp, wheelhouse, user)
    name = _name(repo, sqsh, user.uid)
    try:
        locked = uvdock(cluster, repo, "--image", sqsh, "lock", user=user, allocation=2)
        assert locked.code == 0, locked.err
        assert _resolved(locked.err) == 1, locked.err
        assert (repo / "uv.lock").stat().st_uid == user.uid
        synced = uvdock(cluster, repo, "--image", sqsh, "sync", user=user, allocation=2)
        assert synced.code == 0, synced.err
        assert "n1: environment synced" in synced.out and "n2: environment synced" in synced.out
        ran = uvdock(
            cluster,
            repo,
            "--image",
            sqsh,
            "run",
            "--",
            "python",
            "-c",
            IMPORTS,
            user=user,
            allocation=2,
        )
        assert ran.code == 0, ran.err
        assert sorted(ran.out.split()) == ["n1", "n2"]
        for node in NODES:
            assert name in unpacked_on(node, user.uid)
            assert name not in unpacked_on(node)  # not root's
    finally:
        for node in NODES:
            shutil.rmtree(MN_DIR / node / "enroot-data" / f"user-{user.uid}", ignore_errors=True)
    assert jobs_left(cluster) == []
