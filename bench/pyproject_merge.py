"""Benchmark: the three-way pyproject.toml merge on Megatron-LM's real file.

Base is examples/megatron-lm/pyproject.toml (the real file); ours and theirs each edit
dependency lists, a uv source and a tool.uv value (the edits of
tests/lock/test_pyproject_merge.py). Measured in-process, best of N after a warm-up:
`merge_pyproject(base, ours, theirs)` against the baseline `tomllib.loads(base)` (one
parse of the same file), in the same run; also with git's own merge passed in, as the
driver does (clean: its text is compared by data; conflicted: its hunks are resolved). Also the cold cost: importing the merge module
(tomlkit, packaging) in a fresh interpreter, and a whole `uvdock merge-driver pyproject`
run as git would start it, against `python -c pass`.

    uv run python bench/pyproject_merge.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "examples" / "megatron-lm" / "pyproject.toml"
sys.path.insert(0, str(ROOT / "tests" / "lock"))
sys.path.insert(0, str(ROOT / "tests"))

from uvdock.merge.textual import MARKER_SIZE, Textual  # noqa: E402


def best(fn: Callable[[], object], runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def process(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(sorted(times)[: max(1, runs // 2)])


def git_textual(base: str, ours: str, theirs: str) -> Textual:
    """git merge-file -p of the three texts, as the merge driver runs it."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            (Path(tmp) / name).write_text(text, encoding="utf-8")
            files.append(str(Path(tmp) / name))
        argv = ["git", "merge-file", "-p", "--diff3", f"--marker-size={MARKER_SIZE}", *files]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return Textual(done.stdout, done.returncode == 0)


def hunk_sides(base: str) -> tuple[str, str]:
    """Both sides add a different package at the end of no-build-isolation-package."""
    end = '    "fast-hadamard-transform",\n]\n'
    return (
        base.replace(end, '    "fast-hadamard-transform",\n    "flash-attn",\n]\n'),
        base.replace(end, '    "fast-hadamard-transform",\n    "nv-grouped-gemm",\n]\n'),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    from test_pyproject_merge import OURS_EDITS, THEIRS_EDITS, edited

    from uvdock.merge.pyproject import merge_pyproject

    base = REAL.read_text(encoding="utf-8")
    ours, theirs = edited(base, OURS_EDITS), edited(base, THEIRS_EDITS)
    result = merge_pyproject(base, ours, theirs)
    assert result.text == edited(ours, THEIRS_EDITS), "the merge is not the expected text"
    merge = best(lambda: merge_pyproject(base, ours, theirs), args.runs)
    parse = best(lambda: tomllib.loads(base), args.runs)
    textual = git_textual(base, ours, theirs)
    assert textual.clean, "the bench's edits are disjoint: git merges them cleanly"
    with_git = best(lambda: merge_pyproject(base, ours, theirs, textual), args.runs)
    conflicted = git_textual(base, *hunk_sides(base))
    assert not conflicted.clean
    hunks = best(lambda: merge_pyproject(base, *hunk_sides(base), conflicted), args.runs)
    print(f"file: {REAL} ({len(base.encode())} bytes, {base.count(chr(10))} lines)")
    print(f"merge_pyproject (3 tomlkit parses + walk + dump): {merge * 1000:.1f} ms")
    print(f"  + git's clean text compared (tomllib x2):       {with_git * 1000:.1f} ms")
    print(f"  + git's conflicted hunks resolved:              {hunks * 1000:.1f} ms")
    print(f"tomllib.loads of the same file:                   {parse * 1000:.2f} ms")
    print(f"ratio: {merge / parse:.0f}x (with git's text: {with_git / parse:.0f}x)")
    worst = max(merge, with_git, hunks)
    print(f"budget: 100 ms per merge; worst here {worst * 1000:.1f} ms")
    py = sys.executable
    runs = max(5, args.runs // 2)
    bare = process([py, "-c", "pass"], runs)
    imports = process([py, "-c", "import uvdock.merge.pyproject"], runs)
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
            (Path(tmp) / name).write_text(text, encoding="utf-8")
            files.append(str(Path(tmp) / name))
        driver = [py, "-m", "uvdock", "merge-driver", "pyproject", *files]

        def reset_and_run() -> None:
            (Path(tmp) / "ours").write_text(ours, encoding="utf-8")
            subprocess.run(driver, check=True, capture_output=True, cwd=tmp)

        whole = best(reset_and_run, runs)
    print(f"python -c pass:                         {bare * 1000:.0f} ms")
    print(f"import uvdock.merge.pyproject:     {imports * 1000:.0f} ms")
    print(f"uvdock merge-driver pyproject (whole):  {whole * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
