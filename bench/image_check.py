"""Benchmark: `uvdock image check` on a Megatron-LM-sized tree vs `python -c pass`.

Builds a temporary git repository holding the real pin files (../shared/megatron-lm, or a
minimal stand-in when that is absent) plus a few thousand tracked files, some of which
mention nvcr.io/nvidia/pytorch tags, then times both commands (interleaved; median of the
fastest half) and prints the ratio. Budget: 5x. Exits 1 when over budget.

    uv run python bench/image_check.py [--runs N] [--files N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET = 5.0
ROOT = Path(__file__).resolve().parents[1]
SHARED_MEGATRON = ROOT.parent / "shared" / "megatron-lm"

STAND_IN = {
    "docker/.ngc_version.dev": "nvcr.io/nvidia/pytorch:26.06-py3\n",
    "docker/.ngc_version.lts": "nvcr.io/nvidia/pytorch:25.09-py3",
    "docker/Dockerfile.ci.dev": "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3\n"
    "FROM ${FROM_IMAGE_NAME} AS main\n",
    "docker/Dockerfile.ci.lts": "ARG FROM_IMAGE_NAME\nFROM ${FROM_IMAGE_NAME} as main\n",
    ".gitlab/stages/01.build.yml": "test:pre_build_image:\n  parallel:\n    matrix:\n"
    + "".join(
        f"      - IMAGE: {image}\n        FILE: {file}\n{extra}"
        f"        BASE_IMAGE: nvcr.io/nvidia/pytorch:{tag}\n        PLATFORM: {platform}\n"
        for image, file, extra, tag in (
            ("CI_MCORE_LTS_IMAGE", "Dockerfile.ci.lts", "", "25.09-py3"),
            ("CI_MCORE_DEV_IMAGE", "Dockerfile.ci.dev", "        IMAGE_TYPE: dev\n", "26.06-py3"),
        )
        for platform in ("amd64", "arm64")
    ),
}


def git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@uvdock.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@uvdock.invalid",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def build_tree(repo: Path, files: int) -> None:
    if SHARED_MEGATRON.is_dir():
        shutil.copytree(SHARED_MEGATRON, repo)
        for path in repo.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
    else:
        for rel, text in STAND_IN.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
    body = "".join(f"def function_{n}(x):\n    return x * {n}\n\n" for n in range(60))
    for n in range(files):
        folder = repo / "megatron" / f"package_{n % 40}" / f"sub_{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        text = body
        if n % 250 == 0:  # docs and examples that mention the image: informational
            text = f"# docker run nvcr.io/nvidia/pytorch:25.{(n // 250) % 12 + 1:02d}-py3\n" + body
        (folder / f"module_{n}.py").write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def robust(times: list[float]) -> float:
    """Median of the fastest half (as bench/startup.py): steady on a busy machine."""
    times = sorted(times)
    return statistics.median(times[: max(1, len(times) // 2)])


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--files", type=int, default=3000)
    args = parser.parse_args()

    # Installed packages are byte-compiled; an editable checkout under
    # PYTHONDONTWRITEBYTECODE would otherwise be measured compiling itself.
    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    script = Path(sys.executable).parent / "uvdock"
    uvdock = [str(script)] if script.exists() else [sys.executable, "-m", "uvdock"]
    with tempfile.TemporaryDirectory(prefix="uvdock-bench-") as tmp:
        repo = Path(tmp) / "megatron-lm"
        build_tree(repo, args.files)
        check = [*uvdock, "--repo", str(repo), "image", "check"]
        show = [*uvdock, "--repo", str(repo), "image", "show"]
        warm = subprocess.run(check, capture_output=True, text=True, check=False)
        if warm.returncode != 0:
            print(f"image check failed on the bench tree:\n{warm.stdout}{warm.stderr}")
            return 2
        rounds: dict[str, list[float]] = {"pass": [], "version": [], "check": [], "show": []}
        for _ in range(args.runs):  # interleaved, so a load spike hits all of them alike
            rounds["pass"].append(timed([sys.executable, "-c", "pass"]))
            rounds["version"].append(timed([*uvdock, "--version"]))
            rounds["check"].append(timed(check))
            rounds["show"].append(timed(show))
    baseline, version, measured, listing = (
        robust(rounds[k]) for k in ("pass", "version", "check", "show")
    )
    ratio = measured / baseline
    verdict = "within" if ratio <= BUDGET else "OVER"
    print(f"tree: {args.files} generated files + the real pin files; {args.runs} interleaved runs")
    print(f"python -c pass      {baseline * 1000:7.1f} ms")
    print(
        f"uvdock --version    {version * 1000:7.1f} ms  ratio {version / baseline:.2f}x (CLI floor)"
    )
    print(
        f"uvdock image check  {measured * 1000:7.1f} ms  ratio {ratio:.2f}x "
        f"({verdict} budget {BUDGET:g}x)"
    )
    print(
        f"uvdock image show   {listing * 1000:7.1f} ms  ratio {listing / baseline:.2f}x (no budget)"
    )
    return 0 if ratio <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
