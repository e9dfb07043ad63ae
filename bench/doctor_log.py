"""Benchmark: `uvdock doctor LOG` on a 100,000-line CI log vs `python -c pass`.

The log is pytest and uv noise with ANSI colours and GitHub Actions timestamps, and one
stale-lock error near the end (the worst case: every signature scans the whole log).
Both commands run interleaved; the median of the fastest half is compared. Budget: 25x,
about half a second here: a 5 MB log is read, cleaned of colours and timestamps, and
scanned once per signature pattern (typical failure logs are a few thousand lines).

    uv run python bench/doctor_log.py [--runs N] [--lines N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET = 25.0

NOISE = [
    "\x1b[32mPASSED\x1b[0m tests/unit_tests/test_utils.py::test_divide[{i}]",
    " Downloading nvidia-modelopt (1.2MiB)",
    "Resolved 296 packages in 2.41s",
    "   Building megatron-core @ file:///workspace",
    "tests/unit_tests/data/test_builder.py::test_builder[{i}] \x1b[32mPASSED\x1b[0m [ 42%]",
    "  warnings.warn(f'deprecated option {i}', DeprecationWarning)",
]


def make_log(path: Path, lines: int) -> None:
    stamp = "2025-06-01T10:00:00.1234567Z "
    body = [stamp + NOISE[i % len(NOISE)].format(i=i) for i in range(lines)]
    body[-10] = (
        stamp + "error: The lockfile at `uv.lock` needs to be updated, but `--locked` was provided."
    )
    path.write_text("\n".join(body) + "\n")


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=False)
    return time.perf_counter() - start


def fastest_half_median(samples: list[float]) -> float:
    return statistics.median(sorted(samples)[: max(1, len(samples) // 2)])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ci.log"
        make_log(log, args.lines)
        check = subprocess.run(
            [sys.executable, "-m", "uvdock", "--json", "doctor", str(log)],
            capture_output=True,
            text=True,
            check=False,
        )
        if check.returncode != 0 or '"stale-lock"' not in check.stdout:
            print(f"doctor did not find the stale lock: {check.stdout}{check.stderr}")
            return 1
        baseline, doctor = [], []
        for _ in range(args.runs):
            baseline.append(timed([sys.executable, "-c", "pass"]))
            doctor.append(timed([sys.executable, "-m", "uvdock", "doctor", str(log)]))
    base, ours = fastest_half_median(baseline), fastest_half_median(doctor)
    ratio = ours / base
    verdict = "within" if ratio <= BUDGET else "OVER"
    print(
        f"python -c pass: {base * 1000:.0f} ms; uvdock doctor ({args.lines} lines): "
        f"{ours * 1000:.0f} ms; ratio {ratio:.1f}x ({verdict} budget {BUDGET:.0f}x)"
    )
    return 0 if ratio <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
