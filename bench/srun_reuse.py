"""The srun engine's reuse of the unpacked container (issue 22), measured in the same run:

  second `uvdock --engine srun lock --check` in a row   <= 40%  of the first

The first unpacks the .sqsh (pyxis --container-name, once per image identity); the second
reuses it. Each round gives the .sqsh a new identity (its mtime), so every first run
unpacks for real; the containers it creates are removed at the end.

Run (root, after .ci/slurm-setup): uv run python bench/srun_reuse.py [ROUNDS]
  UVDOCK_TEST_SQSH  the .sqsh (default /tmp/slurm-setup/images/uvdock-test.sqsh)
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
sys.path.insert(0, str(ROOT / "src"))
from uvdock.run import slurm  # noqa: E402

SQSH = Path(os.environ.get("UVDOCK_TEST_SQSH", "/tmp/slurm-setup/images/uvdock-test.sqsh"))
ENROOT_DATA = Path(os.environ.get("UVDOCK_TEST_ENROOT_DATA", "/tmp/enroot-data"))
BUDGET = 0.40
PYPROJECT = (
    '[project]\nname = "tiny"\nversion = "0"\nrequires-python = ">=3.8"\ndependencies = ["six"]\n'
)


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-400:]}")
    return took


def main(rounds: int) -> int:
    if not SQSH.is_file() or shutil.which("srun") is None:
        print(f"skipped: no Slurm or no {SQSH} (run .ci/slurm-setup)")
        return 0
    with tempfile.TemporaryDirectory(prefix="uvdock-bench-srun-") as tmp:
        folder = Path(tmp)
        image = folder / "image.sqsh"
        shutil.copyfile(SQSH, image)
        repo = folder / "repo"
        repo.mkdir()
        (repo / "pyproject.toml").write_text(PYPROJECT)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        uvdock = [sys.executable, "-m", "uvdock", "--repo", str(repo), "--engine", "srun"]
        check = [*uvdock, "--image", str(image), "lock", "--check"]
        timed([*uvdock, "--image", str(image), "lock"], repo)  # uv.lock, and a warm uv cache
        names = [slurm.container_name(str(image), repo, os.getuid())]
        firsts, seconds = [], []
        try:
            for n in range(rounds):
                os.utime(image, (time.time() + n + 1, time.time() + n + 1))  # a new identity
                names.append(slurm.container_name(str(image), repo, os.getuid()))
                firsts.append(timed(check, repo))
                seconds.append(timed(check, repo))
                print(f"round {n + 1}: first {firsts[-1]:.2f} s, second {seconds[-1]:.2f} s")
        finally:
            for name in names:
                shutil.rmtree(
                    ENROOT_DATA / f"user-{os.getuid()}" / f"pyxis_{name}", ignore_errors=True
                )
    first, second = statistics.median(firsts), statistics.median(seconds)
    ratio = second / first
    verdict = "ok" if ratio <= BUDGET else "OVER BUDGET"
    print(f"lock --check: first {first:.2f} s (unpacks), second {second:.2f} s (reuses)")
    print(f"second / first = {ratio:.2f} (budget <= {BUDGET:.2f}): {verdict}")
    return 0 if ratio <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
