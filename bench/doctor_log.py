"""Benchmark: `uvdock doctor LOG` on a 100,000-line CI log vs `python -c pass`.

The log is pytest and uv noise with ANSI colours and GitHub Actions timestamps, and one
stale-lock error near the end (the worst case: every signature scans the whole log).
Both commands run interleaved; the median of the fastest half is compared. Budget: 25x,
about half a second here: a 5 MB log is read, cleaned of colours and timestamps, and
scanned once per signature pattern (typical failure logs are a few thousand lines).

Then, with --big (the bounded-reading budget): `uvdock doctor` as a child on generated logs
of each --sizes MB (default 200 and 2000; written to /tmp, deleted after), one emoji in each
(a non-ASCII character once made Python hold the whole log at 4 bytes a character): the
child's peak RSS (GNU time, /usr/bin/time) and MB/s. Budget: under 100 MB peak, whatever the size. And
each pathological line of issue 20 (160 KB of unterminated `ESC ]`, 80 KB of unterminated
`No module named '`, repeated `copy-pr-bot`, ...) in a log of its own: under 1 s each.

    uv run python bench/doctor_log.py [--runs N] [--lines N]
    uv run python bench/doctor_log.py --big [--sizes 200,2000]
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
PEAK_BUDGET_MB = 100.0
LINE_BUDGET_S = 1.0
PATHOLOGICAL = {
    "unterminated ESC ] (160 KB)": "\x1b]" * 80_000,
    "unterminated No module named ' (80 KB)": "ModuleNotFoundError: No module named '"
    + "a" * 80_000,
    "repeated copy-pr-bot (240 KB)": "copy-pr-bot " * 20_000,
    "repeated CONFLICT ( (200 KB)": "CONFLICT (" * 20_000,
    "repeated No module named ' (114 KB)": "ModuleNotFoundError: No module named '" * 3_000,
    "repeated lookup (210 KB)": "lookup " * 30_000,
    "one 64 MB line without a newline": "x" * (64 << 20),
}

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
    parser.add_argument("--big", action="store_true", help="peak memory and MB/s on big logs")
    parser.add_argument("--sizes", default="200,2000", help="MB of each big log")
    args = parser.parse_args()
    if args.big:
        lines_ok = pathological()
        sizes_ok = big_logs([int(size) for size in args.sizes.split(",")])
        return 0 if lines_ok and sizes_ok else 1
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


def write_big_log(path: Path, megabytes: int) -> int:
    """A CI log of about `megabytes` MB, written in blocks; one emoji; the stale lock last."""
    stamp = "2025-06-01T10:00:00.1234567Z "
    block = "".join(stamp + NOISE[i % len(NOISE)].format(i=i) + "\n" for i in range(20_000))
    data = block.encode()
    with path.open("wb") as fh:
        fh.write((stamp + "tests passed \N{PARTY POPPER}\n").encode())
        for _ in range(max(1, (megabytes << 20) // len(data))):
            fh.write(data)
        fh.write(
            b"error: The lockfile at `uv.lock` needs to be updated, but `--locked` was provided.\n"
        )
    return path.stat().st_size


def child_run(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MB (GNU time's %M: the child's own, not a forked copy of
    this process) and stdout of a child process."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-o", rss.name, "-f", "%M", *argv],
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - start
        kilobytes = float(rss.read().split()[-1])
    return seconds, kilobytes / 1024, done.stdout


def big_logs(sizes: list[int]) -> bool:
    ok = True
    _, base_mb, _ = child_run([sys.executable, "-c", "import uvdock.doctor.logscan"])
    print(f"baseline (python importing the reader): peak {base_mb:.0f} MB")
    for megabytes in sizes:
        with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
            log = Path(tmp) / "big.log"
            size = write_big_log(log, megabytes)
            argv = [sys.executable, "-m", "uvdock", "--json", "doctor", str(log)]
            seconds, peak, out = child_run(argv)
        found = '"stale-lock"' in out
        within = peak < PEAK_BUDGET_MB and found
        ok &= within
        print(
            f"{size / 1e6:7.0f} MB log: {seconds:6.1f} s, {size / 1e6 / seconds:5.0f} MB/s, "
            f"peak {peak:4.0f} MB ({'within' if within else 'OVER'} budget "
            f"{PEAK_BUDGET_MB:.0f} MB){'' if found else '; the stale lock was NOT found'}"
        )
    return ok


def pathological() -> bool:
    from uvdock.doctor.logscan import diagnose_stream

    ok = True
    for name, line in PATHOLOGICAL.items():
        import io

        data = (line + ("" if "without a newline" in name else "\n")).encode()
        start = time.perf_counter()
        diagnose_stream(io.BytesIO(data))
        seconds = time.perf_counter() - start
        ok &= seconds < LINE_BUDGET_S
        verdict = "within" if seconds < LINE_BUDGET_S else "OVER"
        print(f"{name}: {seconds * 1000:.0f} ms ({verdict} budget {LINE_BUDGET_S:.0f} s)")
    return ok


if __name__ == "__main__":
    sys.exit(main())
