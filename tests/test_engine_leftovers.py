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
