"""Podman objects a test run leaves behind: find them by the run's marker, remove them.

Every container, image, manifest list and volume a test creates is named through
`conftest.engine_name`, which puts the marker of this test process in the name (the xdist
run id and worker, or a fresh id without xdist). Only objects carrying this process's
marker are touched: other processes (xdist siblings, other checkouts' test runs on the
same machine) share podman's store and may be using theirs right now.

Images are read from the store's own record (`images.json` under podman's graph root), not
from `podman images`: podman 4.3 fails every image listing while any broken manifest list
and any dangling image share the store, so another process's broken object would fail this
check. The same record shows dangling layerless images (no name, no layer: what a build's
parent left when podman could not tell it was one), which no marker can name.

A test that must break podman's state does so in a store of its own (`own_storage`).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import NamedTuple, TypedDict

# This test process's marker: the xdist run id and worker (each worker checks its own), or
# a fresh id without xdist.
TEST_RUN = "-".join(
    (
        (os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex)[:10],
        os.environ.get("PYTEST_XDIST_WORKER", "main"),
    )
)


def engine_name(stem: str) -> str:
    """A container/image/manifest/volume name unique to this process, owned by the leak check."""
    return f"uvdock-{stem}-{TEST_RUN}-{uuid.uuid4().hex[:8]}"


def own_storage(folder: Path) -> dict[str, str]:
    """The environment in which podman (and every child that runs it) uses a store of its own
    under `folder` (vfs driver), never the machine's; the caller removes `folder` after."""
    conf = folder / "storage.conf"
    conf.write_text(
        f'[storage]\ndriver = "vfs"\ngraphroot = "{folder / "root"}"\n'
        f'runroot = "{folder / "runroot"}"\n'
    )
    return {**os.environ, "CONTAINERS_STORAGE_CONF": str(conf)}


_LISTINGS = {
    "container": ["podman", "ps", "-a", "--external", "--format", "{{.ID}} {{.Names}}"],
    "volume": ["podman", "volume", "ls", "--format", "{{.Name}} {{.Name}}"],
}


class Leftover(NamedTuple):
    kind: str  # container, manifest, image, volume, dangling image (named by its ID)
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


def _podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=False)


def _listing(argv: list[str]) -> str:
    """podman's answer; retried, since podman 4.3 fails a listing ("... not known", exit 125)
    while another process removes what it lists. Never read as empty when it failed: that
    would pass a run that leaks."""
    import time

    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    for attempt in range(1, _LISTING_ATTEMPTS):
        if out.returncode == 0:
            break
        time.sleep(_RETRY_PAUSE * attempt)
        out = subprocess.run(argv, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(
            f"cannot check what the tests left in podman: `{' '.join(argv)}` failed "
            f"{_LISTING_ATTEMPTS} times (exit {out.returncode}): {out.stderr.strip()[:300]}"
        )
    return out.stdout


_LISTING_ATTEMPTS = 8
_RETRY_PAUSE = 0.2  # seconds, times the attempt's number: 5.6 s in all


class _Record(TypedDict, total=False):
    id: str
    names: list[str]
    layer: str


def _image_records() -> list[_Record]:
    """Every image in the store podman uses here, as containers/storage records it (written
    by rename, so always whole)."""
    where = "{{.Store.GraphRoot}}\t{{.Store.GraphDriverName}}"
    info = _podman("info", "--format", where)
    if info.returncode != 0:
        raise RuntimeError(f"cannot check what the tests left in podman: {info.stderr.strip()}")
    root, _, driver = info.stdout.strip().partition("\t")
    record = Path(root) / f"{driver}-images" / "images.json"
    records: list[_Record] = json.loads(record.read_text()) if record.exists() else []
    return records


def dangling_layerless() -> set[str]:
    """The IDs of images with neither a name nor a layer."""
    return {r["id"] for r in _image_records() if not r.get("names") and not r.get("layer")}


def find(marker: str) -> list[Leftover]:
    found: list[Leftover] = []
    for kind, argv in _LISTINGS.items():
        for line in _listing(argv).splitlines():
            _id, _, name = line.partition(" ")
            if marker in name:
                found.append(Leftover(kind, name))
    for record in _image_records():
        for name in record.get("names", []):
            if marker in name:
                listed = _podman("manifest", "exists", name).returncode == 0
                found.append(Leftover("manifest" if listed else "image", name))
    order = ("container", "manifest", "image", "dangling image", "volume")
    return sorted(set(found), key=lambda item: order.index(item.kind))


def remove(leftovers: list[Leftover]) -> None:
    """Containers first (they hold images), then manifest lists (`podman rmi` leaves a list
    whose images it removes in the same call), images, volumes."""
    commands = {
        "container": ("rm", "-f", "-t", "0"),
        "manifest": ("manifest", "rm"),
        "image": ("rmi", "-f"),
        "dangling image": ("rmi",),  # not forced: an image a container uses stays
        "volume": ("volume", "rm", "-f"),
    }
    for leftover in leftovers:
        _podman(*commands[leftover.kind], leftover.name)
