"""Ctrl-C, SIGINT/SIGTERM to uvdock alone, scancel: uvdock ends within seconds, no job is
left in squeue, no process of the step, no unpacked pyxis container that was cut short or
temporary; a relock's files come back byte for byte."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from samples.slurm import (
    conflict_on_srun,
    fresh_sqsh,
    jobs_left,
    jobs_named,
    six_repo,
    unpacked,
    uvdock,
    uvdock_argv,
    uvdock_env,
)

from uvdock.run import slurm

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]

QUICK = 15.0  # seconds: srun's own step clean-up (KillWait 5 s) included


def _start(repo: Path, *args: str | Path) -> subprocess.Popen[str]:
    argv = uvdock_argv(["--repo", repo, "--engine", "srun", *args])
    return subprocess.Popen(
        argv,
        cwd=repo,
        env=uvdock_env(repo.parent / "home"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal gives
    )


def _wait_for(
    condition: object, what: str, child: subprocess.Popen[str], limit: float = 120
) -> None:
    deadline = time.monotonic() + limit
    while not condition():  # type: ignore[operator]
        if child.poll() is not None:
            pytest.fail(
                f"uvdock ended (exit {child.returncode}) before {what}: {child.stderr.read() if child.stderr else ''}"
            )
        if time.monotonic() > deadline:
            child.kill()
            pytest.fail(f"no {what} within {limit} s")
        time.sleep(0.1)


def _ended(child: subprocess.Popen[str]) -> tuple[int, float, str]:
    started = time.monotonic()
    try:
        _out, err = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail("uvdock did not end within 60 s of the interrupt")
    return child.returncode, time.monotonic() - started, err


def _step_processes(marker: str) -> list[int]:
    """The step's `sleep MARKER` processes (in the container, seen from the host)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            # `sleep MARKER` or `/usr/bin/sleep MARKER`, not uvdock's own argv
            if len(cmdline) > 1 and cmdline[0].endswith(b"sleep") and cmdline[1] == marker.encode():
                found.append(int(entry))
    return found


def _temporary_containers() -> list[str]:
    # pyxis_<job>.<step>: an unnamed step's container, which only its own clean-up removes.
    return [n for n in unpacked() if n[len(slurm.PYXIS_PREFIX) :][:1].isdigit()]


@pytest.fixture
def image(sqsh: Path, slurm_tmp: Path) -> Path:
    return fresh_sqsh(sqsh, slurm_tmp)  # its containers go with slurm_tmp


def test_two_quick_ctrl_c_to_the_process_group_while_unpacking(
    image: Path, slurm_tmp: Path
) -> None:
    """A raw srun aborts its clean-up on the second Ctrl-C and leaves the unpacked image."""
    repo = six_repo(slurm_tmp)
    name = slurm.PYXIS_PREFIX + slurm.container_name(str(image), repo, 0)
    child = _start(repo, "--image", image, "lock")
    _wait_for(lambda: name in unpacked(), "unpack under way", child)
    os.killpg(child.pid, signal.SIGINT)
    time.sleep(0.2)
    os.killpg(child.pid, signal.SIGINT)
    code, took, err = _ended(child)
    assert code == 130, err
    assert took < QUICK, took
    assert jobs_left() == []
    assert name not in unpacked()  # cut short: removed, never reused half-written
    assert _temporary_containers() == []
    assert not (repo / "uv.lock").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_uvdock_alone_stops_the_step(
    sqsh: Path, slurm_tmp: Path, sig: signal.Signals
) -> None:
    repo = six_repo(slurm_tmp)
    marker = str(3600 + os.getpid() % 1000 + sig)
    child = _start(repo, "--image", sqsh, "run", "--", "sleep", marker)
    _wait_for(lambda: _step_processes(marker), "step running", child)
    os.kill(child.pid, sig)
    code, took, err = _ended(child)
    assert code == 130, err
    assert took < QUICK, took
    assert jobs_left() == []
    assert _step_processes(marker) == []
    assert _temporary_containers() == []


def test_scancel_ends_uvdock_with_the_steps_code(sqsh: Path, slurm_tmp: Path) -> None:
    repo = six_repo(slurm_tmp)
    marker = str(4600 + os.getpid() % 1000)
    child = _start(repo, "--image", sqsh, "run", "--", "sleep", marker)
    _wait_for(lambda: _step_processes(marker), "step running", child)
    for job in jobs_named():
        subprocess.run(["scancel", f"--name={job}"], check=True)
    code, took, err = _ended(child)
    assert code not in (0, 130), err  # the step's own code, not an interrupt of uvdock's
    assert took < QUICK, took
    assert jobs_left() == []
    assert _step_processes(marker) == []
    assert _temporary_containers() == []


def test_an_interrupted_relock_restores_both_files(
    sqsh: Path, slurm_tmp: Path, wheelhouse: Path
) -> None:
    conflict, before = conflict_on_srun(slurm_tmp, wheelhouse, sqsh)
    child = _start(
        conflict.repo, "--image", sqsh, "lock", "resolve", "--onto", "main", "--no-fetch"
    )
    _wait_for(lambda: jobs_named() != [], "relock step", child)
    os.kill(child.pid, signal.SIGINT)
    code, took, err = _ended(child)
    assert code == 130, err
    assert took < QUICK, took
    from samples.lock_conflicts import snapshot

    assert snapshot(conflict.repo) == before
    assert jobs_left() == []
    assert _temporary_containers() == []


def test_ctrl_c_in_a_terminal(sqsh: Path, slurm_tmp: Path) -> None:
    """A real terminal (tmux): Ctrl-C on `uvdock lock` mid-step."""
    import shlex
    import shutil

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    repo = six_repo(slurm_tmp)
    assert uvdock(repo, "--image", sqsh, "lock", "--check").code == 1  # unpacked, ready
    marker = str(5600 + os.getpid() % 1000)
    done = slurm_tmp / "exit-code"
    session = f"uvdock-slurm-{os.getpid()}"
    env = uvdock_env(repo.parent / "home")
    command = shlex.join(
        uvdock_argv(
            ["--repo", repo, "--engine", "srun", "--image", sqsh, "run", "--", "sleep", marker]
        )
    )
    script = f"{command}; echo $? > {shlex.quote(str(done))}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "30", script],
        env=env,
        check=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not _step_processes(marker):
            assert time.monotonic() < deadline, "the step never started in tmux"
            time.sleep(0.1)
        subprocess.run(["tmux", "send-keys", "-t", session, "C-c"], check=True)
        time.sleep(0.2)  # an impatient second one (the pane may be gone already)
        subprocess.run(
            ["tmux", "send-keys", "-t", session, "C-c"], capture_output=True, check=False
        )
        deadline = time.monotonic() + QUICK
        while not done.exists():
            assert time.monotonic() < deadline, "uvdock did not end in the terminal"
            time.sleep(0.1)
        assert done.read_text().strip() == "130"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True, check=False)
    assert jobs_left() == []
    assert _step_processes(marker) == []
    assert _temporary_containers() == []


@pytest.mark.parametrize("delay", [0.3, 0.6, 1.5])
def test_scancel_while_unpacking_leaves_no_half_written_container(
    image: Path, slurm_tmp: Path, delay: float
) -> None:
    """srun returns on scancel while the step's unsquashfs may still write (linuxproc, KillWait):
    a removal before the step has ended leaves a partial tree that the next step reuses."""
    repo = six_repo(slurm_tmp)
    name = slurm.PYXIS_PREFIX + slurm.container_name(str(image), repo, 0)
    child = _start(repo, "--image", image, "lock", "--check")
    _wait_for(lambda: jobs_named() != [], "unpack step", child)
    time.sleep(delay)  # pyxis starting up, or unsquashfs writing
    for job in jobs_named():
        subprocess.run(["scancel", f"--name={job}"], check=True)
    code, took, err = _ended(child)
    assert code == 3, err
    assert took < 45, took
    assert jobs_left() == []
    time.sleep(7)  # KillWait 5 s and more: whatever of the step still ran has ended
    assert name not in unpacked(), err


def test_sigkill_mid_relock_then_abort_cancels_the_job_and_restores(
    sqsh: Path, slurm_tmp: Path, wheelhouse: Path
) -> None:
    """SIGKILL leaves uvdock no chance to stop its step, which runs on under Slurm and could
    write uv.lock after the restore: `--abort` cancels the job first."""
    conflict, before = conflict_on_srun(slurm_tmp, wheelhouse, sqsh)
    # The unpacking run's job may still be listed (COMPLETING): the wait below must see the
    # relock's own job, not that one, or the kill lands before the state is saved.
    assert jobs_left() == []
    child = _start(
        conflict.repo, "--image", sqsh, "lock", "resolve", "--onto", "main", "--no-fetch"
    )
    _wait_for(lambda: jobs_named() != [], "relock step", child)
    os.killpg(child.pid, signal.SIGKILL)  # uvdock and its srun; the job itself stays queued
    child.wait()
    aborted = uvdock(conflict.repo, "-v", "lock", "resolve", "--abort")
    assert aborted.code == 0, aborted.err
    assert "no Slurm job" in aborted.err + aborted.out
    assert jobs_left() == []
    from samples.lock_conflicts import snapshot

    assert snapshot(conflict.repo) == before
    time.sleep(3)  # a surviving step would have written by now
    assert snapshot(conflict.repo) == before
