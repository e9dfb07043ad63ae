"""The run-wide check that tests leave nothing in podman (tests/conftest.py, samples/engine_leftovers).

A real pytest run in a subprocess whose test leaks a podman image, a manifest list of two
images (what the registry fixture left on podman 4.3) and a dangling layerless image: the run
fails, naming them, and they are gone afterwards. Only names carrying the run's marker, and
dangling layerless images that appeared during the run, are touched. Every podman object
here is made in a store of the test's own (`own_storage`), never the machine's: a broken
list there fails `podman images` for every process on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from samples import engine_leftovers

pytestmark = pytest.mark.engine
TESTS = Path(__file__).parent

# A list whose images went with it in one `podman rmi` (the list stays, broken: podman 4.3
# cannot list images while it and a dangling image are in the store), and a build from
# scratch with ENV only, untagged: an image with neither a name nor a layer.
BREAK_STORE = """set -e
cd "$1"
mkdir -p rootfs ctx
echo a > rootfs/a
tar --owner=0 --group=0 --numeric-owner -C rootfs -cf t.tar .
for arch in amd64 arm64; do podman import -q --arch $arch t.tar "localhost/$2:$arch"; done
podman manifest create "localhost/$2-list:1"
for arch in amd64 arm64; do
    podman manifest add "localhost/$2-list:1" "containers-storage:localhost/$2:$arch"
done
podman rmi -f "localhost/$2-list:1" "localhost/$2:amd64" "localhost/$2:arm64"
printf 'FROM scratch\\nENV NVIDIA_PYTORCH_VERSION=26.06\\n' > ctx/Containerfile
podman build -q ctx
"""

LEAKY_TEST = """\
import subprocess
from pathlib import Path
from samples.engine_leftovers import TEST_RUN, engine_name


def test_leaks(tmp_path):
    script = Path(__file__).parent / "break_store.sh"
    subprocess.run(["sh", str(script), str(tmp_path), engine_name("leak-probe")], check=True)
    (tmp_path.parent.parent / "marker").write_text(TEST_RUN)


def test_clean():
    pass
"""


@pytest.fixture
def own_store(engine_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """podman, here and in every child, in a store of this test's own; removed afterwards."""
    folder = tmp_path / "podman"
    folder.mkdir()
    conf = engine_leftovers.own_storage(folder)["CONTAINERS_STORAGE_CONF"]
    monkeypatch.setenv("CONTAINERS_STORAGE_CONF", conf)
    yield folder
    shutil.rmtree(folder)


def _inner_run(tmp_path: Path, test: str) -> tuple[subprocess.CompletedProcess[str], str]:
    folder = tmp_path / "inner"
    folder.mkdir()
    (folder / "test_inner.py").write_text(test)
    (folder / "break_store.sh").write_text(BREAK_STORE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = str(TESTS)
    # -rN: no short summary, which repeats each failure in full where CI is set (pytest does
    # not cut it to the terminal's width there), so the messages are counted once.
    argv = [sys.executable, "-m", "pytest", "-q", "-rN", "-p", "conftest", "-p", "no:cacheprovider"]
    argv += ["-c", os.devnull, "--rootdir", str(folder), "--basetemp", str(tmp_path / "base")]
    out = subprocess.run([*argv, str(folder)], capture_output=True, text=True, env=env, check=False)
    marker = tmp_path / "marker"
    return out, marker.read_text() if marker.exists() else ""


def test_a_run_that_leaks_fails_and_is_cleaned(own_store: Path, tmp_path: Path) -> None:
    out, marker = _inner_run(tmp_path, LEAKY_TEST)
    said = out.stdout + out.stderr
    assert marker, said
    assert out.returncode != 0, said
    assert "tests left 1 podman object(s) behind: manifest localhost/uvdock-leak-probe-" in said
    assert "tests left 1 dangling layerless podman image(s) behind: " in said
    assert said.count("removed now") == 2, said
    assert engine_leftovers.find(marker) == []
    assert engine_leftovers.dangling_layerless() == set()


def test_a_clean_run_passes(own_store: Path, tmp_path: Path) -> None:
    out, _ = _inner_run(tmp_path, "def test_nothing():\n    pass\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "left" not in out.stdout


def test_what_others_broke_before_the_run_neither_fails_nor_is_touched(
    own_store: Path, tmp_path: Path
) -> None:
    # Another process's broken list and dangling image, there before the run starts.
    (tmp_path / "other").mkdir()
    subprocess.run(["sh", "-c", BREAK_STORE, "sh", str(tmp_path / "other"), "other"], check=True)
    dangling = engine_leftovers.dangling_layerless()
    assert len(dangling) == 1
    listing = subprocess.run(["podman", "images", "-a"], capture_output=True, check=False)
    assert listing.returncode != 0  # the state the machine's podman was in
    out, _ = _inner_run(tmp_path, "def test_nothing():\n    pass\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "left" not in out.stdout
    assert engine_leftovers.dangling_layerless() == dangling
    gone = subprocess.run(["podman", "manifest", "rm", "localhost/other-list:1"], check=False)
    assert gone.returncode == 0  # still there: not the run's to remove


# podman 4.3 lists containers while another process (a sibling test, another checkout's run)
# removes one: the listing then fails ("... not known", exit 125). A check that reads the
# failed listing as empty passes a leaking run. The images come from the store's record,
# which a fake one stands for here.
FLAKY_PODMAN = """#!/bin/sh
case "$1" in
ps)
    count=$(cat "$FAKE_COUNT" 2>/dev/null || echo 0)
    echo $((count + 1)) > "$FAKE_COUNT"
    if [ "$count" -lt "$FAKE_FAILURES" ]; then
        echo 'Error: container 58e6 not known' >&2
        exit 125
    fi
    echo "58e6 uvdock-probe-$FAKE_MARKER-1" ;;
info) printf '%s\\tvfs\\n' "$FAKE_ROOT" ;;
manifest) exit 1 ;;
esac
exit 0
"""


def _flaky_podman(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "podman").write_text(FLAKY_PODMAN)
    (bin_dir / "podman").chmod(0o755)
    (tmp_path / "root" / "vfs-images").mkdir(parents=True)
    records = [
        {"id": "c0ffee", "names": ["localhost/uvdock-probe-m4rk-1:1"], "layer": "1a"},
        {"id": "d4", "names": ["localhost/someone-else:1"], "layer": "1a"},
        {"id": "e5"},
    ]
    (tmp_path / "root" / "vfs-images" / "images.json").write_text(json.dumps(records))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ROOT", str(tmp_path / "root"))
    monkeypatch.setenv("FAKE_COUNT", str(tmp_path / "count"))
    monkeypatch.setenv("FAKE_FAILURES", str(failures))
    monkeypatch.setenv("FAKE_MARKER", "m4rk")


def test_a_listing_that_fails_while_others_remove_containers_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _flaky_podman(tmp_path, monkeypatch, failures=2)
    found = engine_leftovers.find("m4rk")
    assert [str(item) for item in found] == [
        "container uvdock-probe-m4rk-1", "image localhost/uvdock-probe-m4rk-1:1"
    ]  # fmt: skip
    assert engine_leftovers.dangling_layerless() == {"e5"}


def test_a_listing_that_keeps_failing_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _flaky_podman(tmp_path, monkeypatch, failures=1000)
    monkeypatch.setattr(engine_leftovers, "_RETRY_PAUSE", 0.001)  # the same 8 attempts
    with pytest.raises(RuntimeError, match="58e6 not known"):
        engine_leftovers.find("m4rk")
    assert (tmp_path / "count").read_text().strip() == "8"  # every attempt was made
