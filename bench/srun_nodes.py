"""`uvdock sync` on two nodes against one, and a second `lock --check` with the per-node
containers kept (issue 31), on the two-node cluster (.ci/slurm-nodes up):

  sync inside `salloc -N2`   <= 1.3x   sync inside `salloc -N1`

Each round makes a fresh checkout (its containers are its own), locks it and unpacks the
image on the allocation's nodes first (`run -- true`, not timed), then times `sync` (the
dev selection installed into every node's container, from a warm uv cache) and a second
`lock --check`. The containers are removed at the end.

Run (root): uv run python bench/srun_nodes.py [ROUNDS]
  UVDOCK_TEST_SQSH       the .sqsh (default /tmp/slurm-setup/images/uvdock-test.sqsh)
  UVDOCK_TEST_MULTINODE  the cluster's folder (default /tmp/slurm-setup/multinode)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]
from samples.wheels import build_wheelhouse, project_pyproject  # noqa: E402

SQSH = Path(os.environ.get("UVDOCK_TEST_SQSH", "/tmp/slurm-setup/images/uvdock-test.sqsh"))
MN_DIR = Path(os.environ.get("UVDOCK_TEST_MULTINODE", "/tmp/slurm-setup/multinode"))
BUDGET = 1.3


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-600:]}")
    return took


def checkout(folder: Path, wheels: Path) -> Path:
    repo = folder / "repo"
    repo.mkdir(parents=True)
    (repo / "pyproject.toml").write_text(
        project_pyproject(["alpha"], groups={"dev": ["beta"], "test": ["gamma"]})
    )
    shutil.copytree(wheels, repo / "wheels")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def main(rounds: int) -> int:
    conf = MN_DIR / "slurm.conf"
    if not SQSH.is_file() or not conf.is_file():
        print(f"skipped: no {conf} or no {SQSH} (run .ci/slurm-setup, .ci/slurm-nodes up)")
        return 0
    env = {**os.environ, "SLURM_CONF": str(conf)}
    data = {n: MN_DIR / n / "enroot-data" / "user-0" for n in ("n1", "n2")}
    before = {n: set(os.listdir(d)) if d.is_dir() else set() for n, d in data.items()}
    syncs: dict[int, list[float]] = {1: [], 2: []}
    checks: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="uvdock-bench-nodes-") as tmp:
        wheels = build_wheelhouse(Path(tmp) / "wheels")
        try:
            for n in range(rounds):
                for nodes in (1, 2):
                    repo = checkout(Path(tmp) / f"r{n}-{nodes}", wheels)
                    salloc = ["salloc", "--quiet", f"--nodes={nodes}"]
                    uvdock = [*salloc, sys.executable, "-m", "uvdock", "--repo", str(repo)]
                    uvdock += ["--engine", "srun", "--image", str(SQSH)]
                    timed([*uvdock, "lock"], repo, env)
                    timed([*uvdock, "run", "--", "true"], repo, env)  # unpacked everywhere
                    syncs[nodes].append(timed([*uvdock, "sync"], repo, env))
                    timed([*uvdock, "lock", "--check"], repo, env)
                    checks[nodes].append(timed([*uvdock, "lock", "--check"], repo, env))
                print(
                    f"round {n + 1}: sync N1 {syncs[1][-1]:.2f} s, N2 {syncs[2][-1]:.2f} s; "
                    f"second lock --check N1 {checks[1][-1]:.2f} s, N2 {checks[2][-1]:.2f} s"
                )
        finally:
            for node, kept in before.items():
                for name in set(os.listdir(data[node])) - kept:
                    shutil.rmtree(data[node] / name, ignore_errors=True)
    one, two = statistics.median(syncs[1]), statistics.median(syncs[2])
    print(f"sync: median {one:.2f} s on one node, {two:.2f} s on two: {two / one:.2f}x")
    print(
        f"second lock --check: median {statistics.median(checks[1]):.2f} s (N1), "
        f"{statistics.median(checks[2]):.2f} s (N2)"
    )
    if two / one > BUDGET:
        print(f"FAIL: over {BUDGET}x")
        return 1
    print(f"ok: within {BUDGET}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
