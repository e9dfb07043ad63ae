"""Ctrl-C, SIGINT and SIGTERM in every placement with a real podman: uvdock exits 130 and
nothing the command started is still running (tests/samples/interrupts.py does one round;
bench/stress_signals.py runs many)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from conftest import init_repo, remove_container, start_container
from samples.interrupts import SIGNAL_KINDS, SLEEP, Placement, interrupt_run, late_markers

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def mounted(engine_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Placement]:
    repo = init_repo(tmp_path_factory.mktemp("interrupts") / "repo")
    name = f"uvdock-test-interrupts-{os.getpid()}-{time.monotonic_ns()}"
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
    time.sleep(SLEEP + 0.5)
    assert late_markers(mounted.repo) == []
