"""Things built once per test run and shared by every pytest-xdist worker.

Each xdist worker is a pytest session of its own, so a session fixture runs once per worker.
What costs seconds (a podman image build) is built by the first worker that asks, under an
exclusive lock on a file in the folder all workers of this run share (the controller's
basetemp); the others wait for it and read what it recorded. Engine objects made this way are
listed for removal when the whole run ends (`remove_at_run_end`), which the controller does in
`pytest_sessionfinish` (tests/conftest.py): a worker cannot know when the others are done.
Without xdist the one session is both worker and controller, and all of this still holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

CLEANUP_FILE = "remove-at-run-end.json"


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this run shares: the controller's basetemp."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(folder: Path, name: str) -> Iterator[None]:
    with (folder / f"{name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def built_once(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], dict[str, str]],
) -> dict[str, str]:
    """What `build(folder)` returned for this run: built by the first worker that asks.

    A build that raises records nothing, so the next worker to ask tries again (and fails the
    same way, with its own error).
    """
    shared = run_folder(tmp_path_factory)
    record = shared / f"{name}.json"
    with _locked(shared, name):
        if record.exists():
            built: dict[str, str] = json.loads(record.read_text())
            return built
        folder = shared / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        built = build(folder)
        record.write_text(json.dumps(built))
        return built


def remove_at_run_end(tmp_path_factory: pytest.TempPathFactory, image: str) -> None:
    """Remove podman image `image` when the whole run ends (every worker done)."""
    shared = run_folder(tmp_path_factory)
    with _locked(shared, CLEANUP_FILE):
        path = shared / CLEANUP_FILE
        images = json.loads(path.read_text()) if path.exists() else []
        if image not in images:  # every worker using it asks
            path.write_text(json.dumps([*images, image]))


def remove_run_objects(shared: Path) -> None:
    """What `remove_at_run_end` listed in `shared`, removed (the controller, at the end)."""
    path = shared / CLEANUP_FILE
    if not path.exists():
        return
    images = json.loads(path.read_text())
    if images:
        subprocess.run(["podman", "rmi", "-f", *images], capture_output=True, check=False)
    path.unlink()
