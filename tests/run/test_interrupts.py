"""Ctrl-C, SIGINT and SIGTERM in every placement with a real podman: uvdock exits 130 and
nothing the command started is still running (tests/samples/interrupts.py does one round;
bench/stress_signals.py runs many)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import engine_name, init_repo, remove_container, start_container
from samples.interrupts import (
    SIGNAL_KINDS,
    SLEEP,
    Placement,
    interrupt_run,
    late_markers,
    uvdock_containers,
)

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def mounted(engine_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Placement]:
    repo = init_repo(tmp_path_factory.mktemp("interrupts") / "repo")
    name = engine_name("test-interrupts")
    start_container(engine_image, repo, name)
    yield Placement("exec", repo, image=engine_image, container=name)
    remove_container(name)


@pytest.mark.parametrize("mode", ["exec", "run", "local"])
def test_every_interrupt_stops_the_command_and_exits_130(mounted: Placement, mode: str) -> None:
    placement = Placement(mode, mounted.repo, mounted.image, mounted.container)
    for number, kind in enumerate(SIGNAL_KINDS):
        tag = f"{mode}-{kind}-{time.monotonic_ns()}"
        outcome = interrupt_run(placement, kind, tag, f"{SLEEP}.{number}{os.getpid() % 997}")
        assert outcome.code == 130, f"{kind}: {outcome.stderr}"
        assert not outcome.leftovers, f"{kind}: {outcome.leftovers}"
        assert "Traceback" not in outcome.stderr and "internal error" not in outcome.stderr
    assert late_markers(mounted.repo) == []


SLOW_VERSION_UV = """#!/bin/sh
if [ "$1" = "--version" ]; then : > /uvdock-signal/version-started; exec sleep 60; fi
exit 0
"""


@pytest.mark.parametrize("kind", ["ctrl-c", "sigterm"])
def test_an_interrupt_during_the_uv_version_probe_leaves_no_container(
    engine_image: str, tmp_path: Path, kind: str
) -> None:
    # `uv --version` is asked in a container of its own before `lock` runs uv: an interrupt
    # then must stop that container too, not only kill the podman client.
    import signal
    import subprocess
    import sys

    repo = init_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1.0"\n')
    signal_dir = tmp_path / "signal"
    signal_dir.mkdir()
    fake = tmp_path / "container-uv"
    fake.write_text(SLOW_VERSION_UV)
    fake.chmod(0o755)
    env = dict(os.environ)
    env["UVDOCK_ENGINE_ARGS"] = f"-v {fake}:/usr/local/bin/uv:ro -v {signal_dir}:/uvdock-signal"
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo)]
    argv += ["--engine", "podman", "--image", engine_image, "lock"]
    child = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not (signal_dir / "version-started").exists() and time.monotonic() < deadline:
        assert child.poll() is None, child.communicate()[1].decode()
        time.sleep(0.05)
    if kind == "ctrl-c":
        os.killpg(child.pid, signal.SIGINT)
    else:
        child.send_signal(signal.SIGTERM)
    _out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err.decode()
    listing = subprocess.run(
        ["podman", "ps", "-a", "--format", "{{.Names}} {{.Mounts}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = [line.split()[0] for line in listing.splitlines() if line.startswith("uvdock-")]
    left = [
        name
        for name in names
        if str(repo)
        in subprocess.run(
            ["podman", "inspect", "--format", "{{range .Mounts}}{{.Source}} {{end}}", name],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    ]
    for name in left:
        remove_container(name)
    assert left == [], err.decode()


def test_a_run_container_without_sh_on_its_path_is_stopped_by_the_engine(
    engine_image: str, tmp_path: Path
) -> None:
    # Every process gets SIGINT from a `sh` started inside; where there is none (exit 127),
    # the engine's own stop still ends the command with a SIGTERM it can act on (not the
    # SIGKILL after the grace period), and leaves no container.
    import signal
    import subprocess
    import sys

    repo = init_repo(tmp_path / "repo")
    env = {**os.environ, "UVDOCK_ENGINE_ARGS": "-e PATH=/nowhere"}
    tag = f"no-sh-{time.monotonic_ns()}"
    # It shrugs off the SIGINT that the engine's signal proxy passes on (as a command busy
    # with its clean-up would), so only the engine's stop can end it before the SIGKILL.
    script = 'trap "echo > .term-$0; exit 143" TERM; trap : INT; : > .started-"$0"; '
    script += "while :; do /bin/sleep 30 & wait; done"
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), "--engine", "podman"]
    argv += ["--image", engine_image, "run", "--", "/bin/sh", "-c", script, tag]
    child = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not (repo / f".started-{tag}").exists() and time.monotonic() < deadline:
        assert child.poll() is None, child.communicate()[1].decode()
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    _out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err.decode()
    assert (repo / f".term-{tag}").exists(), "the command never got the engine's SIGTERM"
    assert uvdock_containers(tag) == []
