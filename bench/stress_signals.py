"""Interrupt uvdock many times in every placement and count what went wrong.

    uv run python bench/stress_signals.py [ROUNDS]      (default 10 rounds per scenario)

Scenarios: {Ctrl-C to the group, SIGINT to uvdock alone, SIGTERM to uvdock alone} x
{exec, run, local} with `uvdock run -- sh -c ...` (tests/samples/interrupts.py), and
`lock resolve` relocking (--engine local, slow fake uv) under the same three signals plus a
double Ctrl-C. A round is good when uvdock exits 130, nothing it started still runs, no
late marker appears, and for `lock resolve` the repository is byte for byte as before.
Needs podman and the test image (localhost/uvdock-test:bookworm).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import init_repo  # noqa: E402
from samples.interrupts import (  # noqa: E402
    SIGNAL_KINDS,
    SLEEP,
    Placement,
    interrupt_run,
    late_markers,
)
from samples.lock_conflicts import make_conflict, snapshot  # noqa: E402
from samples.slow_uv import start_resolve  # noqa: E402
from samples.wheels import build_wheelhouse  # noqa: E402

IMAGE = os.environ.get("UVDOCK_TEST_IMAGE", "localhost/uvdock-test:bookworm")


def run_rounds(root: Path, rounds: int, counts: Counter[str]) -> None:
    repo = init_repo(root / "repo")
    name = f"uvdock-stress-{os.getpid()}"
    subprocess.run(
        ["podman", "run", "-d", "--name", name, "-v", f"{repo}:/workspace", IMAGE, "sleep", "inf"],
        check=True,
        capture_output=True,
    )
    try:
        for number in range(rounds):
            for mode in ("exec", "run", "local"):
                for kind in SIGNAL_KINDS:
                    tag = f"{mode}-{kind}-{number}"
                    duration = (
                        f"{SLEEP}.{number:04d}{'erl'.index(mode[0])}{SIGNAL_KINDS.index(kind)}"
                    )
                    placement = Placement(mode, repo, IMAGE, name)
                    outcome = interrupt_run(placement, kind, tag, duration)
                    key = f"run {mode:5} {kind:7}"
                    counts[f"{key} ok" if outcome.ok else f"{key} BAD"] += 1
                    if not outcome.ok:
                        print(f"BAD {key}: exit {outcome.code} {outcome.leftovers}", flush=True)
        counts["late markers (must be 0)"] += len(late_markers(repo))
    finally:
        subprocess.run(["podman", "rm", "-f", "-t", "0", name], capture_output=True)


def resolve_rounds(root: Path, rounds: int, counts: Counter[str]) -> None:
    wheels = build_wheelhouse(root / "wheelhouse")
    for number in range(rounds):
        for kind in (*SIGNAL_KINDS, "double ctrl-c"):
            work = root / f"resolve-{number}-{kind.replace(' ', '-')}"
            conflict = make_conflict(work, wheels, "rebase")
            before = snapshot(conflict.repo)
            child, _ = start_resolve(conflict.repo, work)
            if kind == "sigint":
                child.send_signal(signal.SIGINT)
            elif kind == "sigterm":
                child.send_signal(signal.SIGTERM)
            else:
                os.killpg(child.pid, signal.SIGINT)
                if kind == "double ctrl-c":
                    time.sleep(0.002 * number)
                    os.killpg(child.pid, signal.SIGINT)
            _, err = child.communicate(timeout=120)
            text = err.decode(errors="replace")
            good = (
                child.returncode == 130
                and snapshot(conflict.repo) == before
                and "could not restore" not in text
                and "internal error" not in text
            )
            key = f"lock resolve {kind:13}"
            counts[f"{key} ok" if good else f"{key} BAD"] += 1
            if not good:
                print(f"BAD {key}: exit {child.returncode}: {text.strip()[-300:]}", flush=True)


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    counts: Counter[str] = Counter()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="uvdock-stress-") as folder:
        run_rounds(Path(folder), rounds, counts)
        resolve_rounds(Path(folder), rounds, counts)
    for key in sorted(counts):
        print(f"{key:40} {counts[key]}")
    print(f"{sum(counts.values())} rounds in {time.monotonic() - started:.0f} s")
    return 1 if any("BAD" in key for key in counts) or counts["late markers (must be 0)"] else 0


if __name__ == "__main__":
    sys.exit(main())
