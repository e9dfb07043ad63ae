"""Start-up budgets (issues 2 and 11), each against a baseline measured in the same run.

  uvdock --version                               <= 3x  python -c pass
  uvdock image check (Megatron-LM copy)          <= 5x  python -c pass
  uvdock --dry-run sync (Megatron-LM copy)       <= 6x  python -c pass
  uvdock --engine podman --container C run -- true   within 150 ms of  podman exec C true

Run: uv run python bench/startup.py   (the podman figure needs podman and the test image)
"""

from __future__ import annotations

import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "megatron-lm"
IMAGE = os.environ.get("UVDOCK_TEST_IMAGE", "localhost/uvdock-test:bookworm")
RUNS = 15


def best(argv: Sequence[str], runs: int = RUNS) -> float:
    """Median of the fastest half: robust against a busy machine."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    times.sort()
    return statistics.median(times[: max(1, runs // 2)])


def interleaved(a: Sequence[str], b: Sequence[str], runs: int) -> tuple[float, float]:
    """Both commands, alternating, so drift in the engine's speed hits them alike."""
    times: dict[int, list[float]] = {0: [], 1: []}
    for _ in range(runs):
        for which, argv in enumerate((a, b)):
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[which].append(time.perf_counter() - start)
    fastest = [sorted(t)[: max(1, runs // 2)] for t in times.values()]
    return statistics.median(fastest[0]), statistics.median(fastest[1])


def megatron_copy(tmp: Path) -> Path:
    repo = tmp / "megatron-lm"
    source = SHARED if SHARED.is_dir() else ROOT / "examples" / "megatron-lm"
    shutil.copytree(source, repo)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def fast_path(uvdock: list[str], repo: Path, baseline: float) -> bool:
    """--version and image check: ratios. True when over budget."""
    failed = False
    for label, args, budget in (
        ("--version", ["--version"], 3),
        ("image check", ["--repo", str(repo), "image", "check"], 5),
    ):
        took = best([*uvdock, *args])
        failed |= took / baseline > budget
        print(f"uvdock {label}: {took * 1000:.1f} ms = {took / baseline:.2f}x (budget {budget}x)")
    return failed


def main() -> int:
    # Measure what a user's second run costs: Python writes byte code on first import,
    # but uv installs packages without it and a shell with PYTHONDONTWRITEBYTECODE (as on
    # CI machines) never writes it, so uvdock would be measured compiling itself.
    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    script = Path(sys.executable).parent / "uvdock"
    uvdock = [str(script)] if script.exists() else [sys.executable, "-m", "uvdock"]
    failed = False
    baseline = best([sys.executable, "-c", "pass"])
    print(f"python -c pass: {baseline * 1000:.1f} ms")

    with tempfile.TemporaryDirectory() as tmp:
        repo = megatron_copy(Path(tmp))
        failed |= fast_path(uvdock, repo, baseline)
        # `sync` needs a persistent container (with only an image it is refused, exit 2).
        dry_sync = ["--dry-run", "--engine", "docker", "--container", "bench", "sync"]
        sync = best([*uvdock, "--repo", str(repo), *dry_sync])
        ratio = sync / baseline
        failed |= ratio > 6
        print(f"uvdock --dry-run sync: {sync * 1000:.1f} ms = {ratio:.2f}x (budget 6x)")

        if (
            shutil.which("podman")
            and subprocess.run(["podman", "image", "exists", IMAGE], check=False).returncode == 0
        ):
            name = f"uvdock-bench-{os.getpid()}"
            subprocess.run(
                [
                    "podman",
                    "run",
                    "-d",
                    "--name",
                    name,
                    "-v",
                    f"{repo}:/workspace",
                    IMAGE,
                    "sleep",
                    "infinity",
                ],
                check=True,
                capture_output=True,
            )
            try:
                warm = [
                    *uvdock,
                    "--repo",
                    str(repo),
                    "--engine",
                    "podman",
                    "--container",
                    name,
                    "run",
                    "--",
                    "true",
                ]
                subprocess.run(
                    warm, check=True
                )  # verifies the mount once; later runs use the verified id
                raw, ours = interleaved(["podman", "exec", name, "true"], warm, runs=15)
                delta_ms = (ours - raw) * 1000
                failed |= delta_ms > 150
                print(
                    f"podman exec true: {raw * 1000:.1f} ms; uvdock run -- true: {ours * 1000:.1f} ms; "
                    f"overhead {delta_ms:.1f} ms (budget 150 ms)"
                )
            finally:
                subprocess.run(
                    ["podman", "rm", "-f", "-t", "0", name], capture_output=True, check=False
                )
        else:
            print("podman or the test image missing: exec overhead not measured")
    print("FAIL: over budget" if failed else "OK: within budget")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
