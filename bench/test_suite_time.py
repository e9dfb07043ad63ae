"""The README's test command (`uv run pytest`, engine tests required) from a fresh clone, two
revisions measured in the same session, alternating, so that both see the same machine.

Budget (issue 19): `uv run pytest` at most 120 s on a 2-core machine with the engine tests
running. On a shared machine the absolute figure moves with everyone else's load, so the ratio
after/before is the figure to compare; the load average is printed beside each run.

  uv run python bench/test_suite_time.py                       # BEFORE=HEAD~1 AFTER=HEAD
  uv run python bench/test_suite_time.py --before REV --after REV --rounds 2

Each round clones both revisions into a temporary folder, runs `uv sync --locked` (not timed),
then times `uv run pytest -q` with UVDOCK_REQUIRE_ENGINE=1; the order alternates per round.
Each revision runs with its own pytest options (the "before" of issue 19 ran serially).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[0]


def _clone(rev: str, folder: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "checkout", "-q", rev], check=True)
    subprocess.run(["uv", "sync", "--locked", "-q"], cwd=folder, check=True)
    return folder


def _time_suite(clone: Path) -> tuple[float, str]:
    env = {**os.environ, "UVDOCK_REQUIRE_ENGINE": "1"}
    env.pop("VIRTUAL_ENV", None)  # this script's own venv is not the clone's
    start = time.perf_counter()
    done = subprocess.run(
        ["uv", "run", "pytest", "-q"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    # pytest's last line ("2252 passed, 25 skipped in 94.15s", "1 failed, 2251 passed ..."),
    # and the failed tests' ids: a run that fails is not a time to compare.
    summary = re.findall(r"^=*\s*(\d+ (?:passed|failed).*?)\s*=*$", done.stdout, re.MULTILINE)
    failed = re.findall(r"^FAILED (\S+)", done.stdout, re.MULTILINE)
    said = summary[-1] if summary else f"exit {done.returncode}"
    return elapsed, said + "".join(f"\n         FAILED {test}" for test in failed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="HEAD~1")
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="uvdock-suite-time-") as tmp:
        clones = {
            "before": _clone(args.before, Path(tmp) / "before"),
            "after": _clone(args.after, Path(tmp) / "after"),
        }
        for round_ in range(args.rounds):
            order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
            for which in order:
                load = _load()
                elapsed, summary = _time_suite(clones[which])
                times[which].append(elapsed)
                print(f"{which:6} {elapsed:7.1f} s  load {load} -> {_load()}  {summary}")
        shutil.rmtree(tmp, ignore_errors=True)
    before, after = statistics.median(times["before"]), statistics.median(times["after"])
    print(f"median before {before:.1f} s, after {after:.1f} s, after/before {after / before:.2f}")


if __name__ == "__main__":
    main()
