"""Benchmark: redaction throughput, lines per second, on a 100,000-line log of real text.

The log repeats real files until it has --lines lines: Megatron-LM's uv.lock (URLs and
sha256 hashes on every other line), its CI YAML and test recipes (the netrc lines, `$TOKEN`
references), and the failure logs of tests/data/doctor. The environment holds two real
secrets and a dozen secret-like names with ordinary values, as a CI job does.

Measured in one run, on the same lines: uvdock's redaction (every credential form plus the
environment's secret values), and a baseline that only does `str.replace` of the secret
values (what a redaction of environment values alone costs). Prints both rates and their
ratio, and how many lines were masked.

    uv run python bench/redact.py [--lines N] [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_CANDIDATES = [
    ROOT / "examples/megatron-lm/uv.lock",
    ROOT / "examples/megatron-lm/.gitlab-ci.yml",
    *sorted((ROOT / "examples/megatron-lm/.gitlab/stages").glob("*.yml")),
    *sorted((ROOT / "examples/megatron-lm/tests/test_utils/recipes").rglob("*.yaml")),
    *sorted((ROOT / "tests/data/doctor").glob("*.log")),
]
SOURCES = [path for path in _CANDIDATES if path.is_file()]
ENV = {
    "HF_TOKEN": "hf_Zq8xLp3vN7rT2kW9yB4mQ6cJ1dF5gH0s",
    "RO_API_TOKEN": "glpat-9fK2mQ7xL4vB8nZ1cR6t",
    "FEATURE_AUTH_ENABLED": "true",
    "SOME_TOKEN": "line",
    "GIT_AUTHOR_NAME": "managed",
    "CI_JOB_TOKEN_FLAG": "docker",
    "HF_TOKEN_PATH": "/root/.cache/huggingface/token",
    "DB_PASSWORD": "lts",
    "API_KEY": "path",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/root",
}


def real_lines(count: int) -> list[str]:
    text: list[str] = []
    for path in SOURCES:
        text.extend(path.read_text(errors="replace").splitlines())
    lines = (text * (count // len(text) + 1))[:count]
    # A few secrets as they leak in real jobs, spread through the log.
    leaks = [
        f"fatal: unable to access 'https://oauth2:{ENV['RO_API_TOKEN']}@gitlab.example.com/a.git/'",
        f"+ huggingface-cli login --token {ENV['HF_TOKEN']}",
        "machine gitlab-master.nvidia.com login okoenig password s3cr3tValue",
    ]
    for index in range(0, count, 997):
        lines[index] = leaks[index % len(leaks)]
    return lines


def rate(redact_line: Callable[[str], str], lines: list[str], runs: int) -> tuple[float, int]:
    samples, masked = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        masked = sum(redact_line(line) != line for line in lines)
        samples.append(time.perf_counter() - start)
    return len(lines) / statistics.median(samples), masked


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from uvdock.ui.redact import MASK, Redactor, secret_values

    lines = real_lines(args.lines)
    values = secret_values(ENV)

    def baseline(line: str) -> str:
        for value in values:
            line = line.replace(value, MASK)
        return line

    base, base_masked = rate(baseline, lines, args.runs)
    ours, ours_masked = rate(Redactor(ENV).text, lines, args.runs)
    print(
        f"{len(lines)} lines ({len(SOURCES)} real files repeated); "
        f"str.replace baseline: {base:,.0f} lines/s ({base_masked} masked); "
        f"uvdock redact: {ours:,.0f} lines/s ({ours_masked} masked); "
        f"{base / ours:.1f}x the baseline's time"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
