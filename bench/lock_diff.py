"""Benchmark: `uvdock lock diff A B` on two 1+ MB locks vs parsing both with tomllib.

A is the real Megatron-LM uv.lock (../shared/megatron-lm/uv.lock); B is a copy derived
from it (a version bump, a removed package, a moved git source, an added package). The
baseline, measured in the same run, is
`python -c "import tomllib; tomllib.load(A); tomllib.load(B)"`. Best of N each, runs
interleaved. Budget: 1.5x. Exits 1 when over budget; skips (exit 0) without the lock.

    uv run python bench/lock_diff.py [--runs N]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET = 1.5
ROOT = Path(__file__).resolve().parents[1]
REAL_LOCK = ROOT.parent / "shared" / "megatron-lm" / "uv.lock"


def derive(text: str) -> str:
    absl = 'name = "absl-py"\nversion = "2.5.0"'
    text = text.replace(absl, absl.replace("2.5.0", "2.6.0"))
    start = text.index('\n[[package]]\nname = "accelerate"\n')
    end = text.index("\n[[package]]\n", start + 1)
    text = text[:start] + text[end:]
    text = re.sub(
        r"(TransformerEngine\.git\?rev=)[0-9a-f]{40}#[0-9a-f]{40}",
        lambda m: m.group(1) + "c" * 40 + "#" + "c" * 40,
        text,
        count=1,
    )
    added = 'name = "brand-new"\nversion = "0.1.0"\nsource = { registry = "https://x.invalid" }'
    return text + f"\n[[package]]\n{added}\n"


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(argv)}\n{done.stderr}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not REAL_LOCK.is_file():
        print(f"skipped: {REAL_LOCK} is absent (the shared Megatron-LM copy is needed)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        a, b = work / "a.lock", work / "b.lock"
        a.write_bytes(REAL_LOCK.read_bytes())
        b.write_text(derive(REAL_LOCK.read_text()))
        baseline = [
            sys.executable,
            "-c",
            f"import tomllib; tomllib.load(open({str(a)!r}, 'rb')); "
            f"tomllib.load(open({str(b)!r}, 'rb'))",
        ]
        command = [sys.executable, "-m", "uvdock", "lock", "diff", str(a), str(b)]
        timed(command, work)  # warm the bytecode cache
        base_times, tool_times = [], []
        for _ in range(args.runs):
            base_times.append(timed(baseline, work))
            tool_times.append(timed(command, work))
    base, tool = min(base_times), min(tool_times)
    ratio = tool / base
    print(f"locks: {REAL_LOCK.stat().st_size / 1e6:.1f} MB each; best of {args.runs}")
    print(f"tomllib.load x2 : {base * 1000:7.1f} ms")
    print(f"uvdock lock diff: {tool * 1000:7.1f} ms")
    verdict = "within" if ratio <= BUDGET else "OVER"
    print(f"ratio {ratio:.2f}x ({verdict} budget {BUDGET}x)")
    return 0 if ratio <= BUDGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
