"""Stress: two uvdock writers at once on one repository, in bounded loops (issue 12 §3).

Runs the three races of tests/samples/races.py (two `recipe mark-broken` on one file,
`image bump` racing `image bump --lts`, two `lock resolve` together) ROUNDS times each
with real processes, and prints per race: runs, clean (both exit 0 and the repository
holds what running them one after the other gives), lost updates, crashes (exit 4 or a
traceback). Exits 1 when any run is not clean.

    uv run python bench/stress_races.py [ROUNDS]     (default 20; lock resolve gets ROUNDS/4)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

GIT_ENV = {
    "GIT_AUTHOR_NAME": "uvdock stress",
    "GIT_AUTHOR_EMAIL": "stress@uvdock.invalid",
    "GIT_COMMITTER_NAME": "uvdock stress",
    "GIT_COMMITTER_EMAIL": "stress@uvdock.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    os.environ.update(GIT_ENV)
    from samples import races
    from samples.wheels import build_wheelhouse

    failures = 0
    with tempfile.TemporaryDirectory(prefix="uvdock-stress-") as tmp:
        root = Path(tmp)
        os.environ["GIT_CONFIG_GLOBAL"] = str(root / "gitconfig")
        wheels = build_wheelhouse(root / "wheels")
        scenarios = {
            "recipe mark-broken x2": lambda: races.mark_broken_race(root / "mark", rounds),
            "image bump vs --lts": lambda: races.bump_race(root / "bump", rounds),
            "lock resolve x2": lambda: races.resolve_race(
                root / "resolve", wheels, max(1, rounds // 4)
            ),
        }
        for name, run in scenarios.items():
            started = time.perf_counter()
            outcomes = run()
            clean = sum(o.ok for o in outcomes)
            lost = sum(not o.consistent for o in outcomes)
            crashed = sum(4 in o.codes or "Traceback" in o.errors for o in outcomes)
            failures += len(outcomes) - clean
            print(
                f"{name:<24} runs {len(outcomes):>3}  clean {clean:>3}  lost updates {lost:>3}  "
                f"crashes {crashed:>3}  ({time.perf_counter() - started:.1f} s)"
            )
    print("all clean" if not failures else f"{failures} run(s) not clean")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
