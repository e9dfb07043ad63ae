"""What the registry check adds to `uvdock image bump`: against a real registry on loopback.

Starts Debian's docker-registry (CNCF distribution) with bearer-token auth and a token
endpoint, as nvcr.io answers (tests/samples/oci_registry.py, the registry tests' own set-up),
pushes the test tags with podman, then times on a Megatron-LM copy, interleaved (median of the
fastest half; the pins are put back between runs, outside the timing):

  uvdock image bump 26.09-py3 --offline   (no registry)
  uvdock image bump 26.09-py3             (the open registry: one manifest GET)
  uvdock image bump 26.09-py3             (401 -> anonymous token -> manifest list)
  uvdock image bump --latest              (+ the tag list, and one probe per skipped tag)
  uvdock image bump 26.09-py3 --pr-body   (+ both images' contents: list, manifest and
                                           config blob per platform, for old and new tag)

and prints each, the check's cost in ms and the ratio to the offline bump. A loopback
registry measures uvdock's own cost (plus the test token endpoint's, which signs each token
with an openssl process); nvcr.io adds its network round trips (three for a tag check: the
challenge, the token, the manifest).

    uv run python bench/image_bump_registry.py [--runs N]
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
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / "examples" / "megatron-lm"  # the real files, kept in the repository
sys.path.insert(0, str(ROOT / "tests"))

from samples.oci_registry import missing_reason, serve  # noqa: E402


def megatron_copy(tmp: Path) -> Path:
    repo = tmp / "megatron-lm"
    shutil.copytree(SHARED, repo)
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "snapshot"]):
        subprocess.run(
            ["git", "-c", "user.name=b", "-c", "user.email=b@b", *command],
            cwd=repo,
            check=True,
        )
    return repo


def timed(argv: Sequence[str], repo: Path, env: dict[str, str]) -> float:
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=repo, check=True)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr}")
    return elapsed


def fastest_half(times: list[float]) -> float:
    return statistics.median(sorted(times)[: max(1, len(times) // 2)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    reason = missing_reason()
    if reason or not SHARED.is_dir():
        print(f"skipped: {reason or 'no examples/megatron-lm'}")
        return 0
    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    script = Path(sys.executable).parent / "uvdock"
    uvdock = [str(script)] if script.exists() else [sys.executable, "-m", "uvdock"]
    with tempfile.TemporaryDirectory() as tmp:
        servers = serve(Path(tmp))
        registries = next(servers)
        try:
            repo = megatron_copy(Path(tmp))
            token = {**os.environ, "UVDOCK_REGISTRY": registries.token_url}
            open_ = {**os.environ, "UVDOCK_REGISTRY": registries.open_url}
            base = [*uvdock, "--repo", str(repo), "image", "bump"]
            commands = {
                "offline": ([*base, "26.09-py3", "--offline"], token),
                "open": ([*base, "26.09-py3"], open_),
                "checked": ([*base, "26.09-py3"], token),
                "latest": ([*base, "--latest"], token),
                "contents": ([*base, "26.09-py3", "--pr-body"], token),
            }
            times: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(runs):
                for name, (argv, env) in commands.items():
                    times[name].append(timed(argv, repo, env))
        finally:
            servers.close()
    print(f"registry: {registries.version}, token auth, loopback; {runs} interleaved runs")
    offline = fastest_half(times["offline"])
    print(f"image bump TAG --offline : {offline * 1000:7.1f} ms")
    labels = {
        "open": "image bump TAG, no auth ",
        "checked": "image bump TAG, token   ",
        "latest": "image bump --latest     ",
        "contents": "image bump TAG --pr-body",
    }
    for name, label in labels.items():
        value = fastest_half(times[name])
        print(
            f"{label}: {value * 1000:7.1f} ms  (+{(value - offline) * 1000:.1f} ms, "
            f"{value / offline:.2f}x the offline bump)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
