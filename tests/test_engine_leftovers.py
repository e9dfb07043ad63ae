"""The run-wide check that tests leave nothing in podman (tests/conftest.py, samples/engine_leftovers).

A real pytest run in a subprocess whose test leaks a podman image and a manifest list of
two images (what the registry fixture left on podman 4.3): the run fails, naming them, and
they are gone afterwards. Only names carrying the run's marker are touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from samples import engine_leftovers

pytestmark = pytest.mark.engine
TESTS = Path(__file__).parent

LEAKY_TEST = """\
import subprocess
from samples.engine_leftovers import TEST_RUN, engine_name


def test_leaks(tmp_path):
    (tmp_path / "rootfs").mkdir()
    (tmp_path / "rootfs" / "a").write_text("a")
    tarball = tmp_path / "t.tar"
    subprocess.run(["tar", "-C", str(tmp_path / "rootfs"), "-cf", str(tarball), "."], check=True)
    base = engine_name("leak-probe")
    images = [f"localhost/{base}:{arch}" for arch in ("amd64", "arm64")]
    for arch, image in zip(("amd64", "arm64"), images):
        subprocess.run(["podman", "import", "-q", "--arch", arch, str(tarball), image], check=True)
    listed = f"localhost/{base}-list:1"
    subprocess.run(["podman", "manifest", "create", listed], check=True)
    for image in images:
        subprocess.run(["podman", "manifest", "add", listed, "containers-storage:" + image], check=True)
    # What the registry fixture did on podman 4.3: the images go, the list stays.
    subprocess.run(["podman", "rmi", "-f", listed, *images], check=True)
    (tmp_path.parent.parent / "marker").write_text(TEST_RUN)


def test_clean():
    pass
"""


def _inner_run(tmp_path: Path, test: str) -> tuple[subprocess.CompletedProcess[str], str]:
    folder = tmp_path / "inner"
    folder.mkdir()
    (folder / "test_inner.py").write_text(test)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = str(TESTS)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider"]
    argv += ["-c", os.devnull, "--rootdir", str(folder), "--basetemp", str(tmp_path / "base")]
    out = subprocess.run([*argv, str(folder)], capture_output=True, text=True, env=env, check=False)
    marker = tmp_path / "marker"
    return out, marker.read_text() if marker.exists() else ""


def test_a_run_that_leaks_fails_and_is_cleaned(engine_image: str, tmp_path: Path) -> None:
    out, marker = _inner_run(tmp_path, LEAKY_TEST)
    said = out.stdout + out.stderr
    assert marker, said
    assert out.returncode != 0, said
    assert "tests left 1 podman object(s) behind: manifest localhost/uvdock-leak-probe-" in said
    assert "removed now" in said
    assert engine_leftovers.find(marker) == []


def test_a_clean_run_passes(engine_image: str, tmp_path: Path) -> None:
    out, _ = _inner_run(tmp_path, "def test_nothing():\n    pass\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "left" not in out.stdout


# podman 4.3 lists images while another process (a sibling test, another checkout's run)
# removes one: `podman images` then fails ("image not known", exit 125), about 1 in 5 calls
# under churn here. A check that reads the failed listing as empty passes a leaking run.
FLAKY_PODMAN = """#!/bin/sh
if [ "$1" = "images" ]; then
    count=$(cat "$FAKE_COUNT" 2>/dev/null || echo 0)
    echo $((count + 1)) > "$FAKE_COUNT"
    if [ "$count" -lt "$FAKE_FAILURES" ]; then
        echo 'Error: retrieving label for image "58e6": image not known' >&2
        exit 125
    fi
    echo "58e6 localhost/uvdock-probe-$FAKE_MARKER-1:1"
    exit 0
fi
if [ "$1" = "manifest" ]; then exit 1; fi
exit 0
"""


def _flaky_podman(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "podman").write_text(FLAKY_PODMAN)
    (bin_dir / "podman").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_COUNT", str(tmp_path / "count"))
    monkeypatch.setenv("FAKE_FAILURES", str(failures))
    monkeypatch.setenv("FAKE_MARKER", "m4rk")


def test_a_listing_that_fails_while_others_remove_images_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _flaky_podman(tmp_path, monkeypatch, failures=2)
    found = engine_leftovers.find("m4rk")
    assert [str(item) for item in found] == ["image localhost/uvdock-probe-m4rk-1:1"]


def test_a_listing_that_keeps_failing_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _flaky_podman(tmp_path, monkeypatch, failures=1000)
    monkeypatch.setattr(engine_leftovers, "_RETRY_PAUSE", 0.001)  # the same 8 attempts
    with pytest.raises(RuntimeError, match="image not known"):
        engine_leftovers.find("m4rk")
    assert (tmp_path / "count").read_text().strip() == "8"  # every attempt was made
