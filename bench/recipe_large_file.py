"""Benchmark: recipe commands on one very large recipe file grow linearly with its size.

Builds two temporary git repositories, each with one recipe file of SMALL and LARGE cases
(dev and LTS rows, comments), and times, best of RUNS each, `uvdock --json recipe show` (every
case) and `uvdock --dry-run recipe mark-broken LAST_CASE --lts` (scan, plan, YAML verification).
The sizes are large enough that the work, not start-up, dominates: linear work grows by
LARGE/SMALL, quadratic work by its square. Budget: growth at most 1.5x the size factor (noise
on a shared machine is well inside it). Exits 1 when over budget. Before review20s: `recipe
show` grew 9x (each case's rows looked up over every entry) and `mark-broken` 4.9x (the cyclic
garbage collector's passes over PyYAML's node graph), 27 s for 8000 cases; now about 4x, 8 s. `recipe show` was quadratic
(each case's rows looked up over every entry) before review20s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL, LARGE = 2000, 8000
RUNS = 2
BUDGET = 1.5

HEADER = """\
type: basic
format_version: 1
maintainers: [mcore]
loggers: [stdout]
spec:
  name: "{test_case}_{environment}_{platforms}"
  model: gpt
  build: mcore-pyt-{environment}
  nodes: 1
  gpus: 8
  platforms: dgx_h100
  script: |-
    cd /opt/megatron-lm
    bash ./tests/functional_tests/shell_test_utils/run_ci_test.sh
products:
"""

ENTRY = """\
  - test_case: [gpt3_case{index}_tp2_pp2_te_dist_optimizer]
    products:
      - environment: [dev]
        scope: [mr, mr-github]  # runs on every merge request
        platforms: [dgx_a100, dgx_h100]
      - environment: [lts]
        scope: [nightly]
"""


def build(root: Path, cases: int) -> Path:
    repo = root / f"recipes-{cases}"
    folder = repo / "tests" / "test_utils" / "recipes" / "h100"
    folder.mkdir(parents=True)
    body = HEADER + "".join(ENTRY.format(index=i) for i in range(cases))
    (folder / "gpt.yaml").write_text(body)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "recipes"]):
        subprocess.run(["git", "-C", str(repo), *argv], check=True, env=env)
    return repo


def best(argv: list[str], cwd: Path) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return min(times)


def main() -> int:
    uvdock = [sys.executable, "-m", "uvdock"]
    with tempfile.TemporaryDirectory() as tmp:
        repos = {n: build(Path(tmp), n) for n in (SMALL, LARGE)}
        commands = {
            "recipe show": lambda n: [*uvdock, "--json", "recipe", "show"],
            "recipe mark-broken": lambda n: [
                *uvdock, "--dry-run", "recipe", "mark-broken",
                f"gpt3_case{n - 1}_tp2_pp2_te_dist_optimizer",
                "--issue", "1", "--reason", "bench", "--lts",
            ],
        }  # fmt: skip
        size = LARGE / SMALL
        over = False
        for name, argv in commands.items():
            small = best(argv(SMALL), repos[SMALL])
            large = best(argv(LARGE), repos[LARGE])
            growth = large / small
            verdict = "ok" if growth <= BUDGET * size else "OVER BUDGET"
            over |= verdict != "ok"
            print(
                f"{name}: {SMALL} cases {small:.2f}s, {LARGE} cases {large:.2f}s;"
                f" growth {growth:.2f}x for {size:.0f}x the cases (budget {BUDGET * size:.1f}x)"
                f" {verdict}"
            )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
