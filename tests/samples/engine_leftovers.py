"""Podman objects a test run leaves behind: find them by the run's marker, remove them.

Every container, image, manifest list and volume a test creates is named through
`conftest.engine_name`, which puts the marker of this test process in the name (the xdist
run id and worker, or a fresh id without xdist). Only objects carrying this process's
marker are touched: other processes (xdist siblings, other checkouts' test runs on the
same machine) share podman's store and may be using theirs right now.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from typing import NamedTuple

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


# podman 4.3 lists manifest lists among images; `podman rmi` leaves a list whose images
# it removes in the same call, so lists go first, with `podman manifest rm`.
_LISTINGS = {
    "container": ["podman", "ps", "-a", "--external", "--format", "{{.ID}} {{.Names}}"],
    "image": ["podman", "images", "-a", "--format", "{{.ID}} {{.Repository}}:{{.Tag}}"],
    "volume": ["podman", "volume", "ls", "--format", "{{.Name}} {{.Name}}"],
}


class Leftover(NamedTuple):
    kind: str  # container, manifest, image, volume
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


def _podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=False)


def _listing(argv: list[str]) -> str:
    """podman's listing; retried, since podman 4.3 fails a listing ("image not known", exit
    125) while another process removes an image. Never read as empty when it failed: that
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


def find(marker: str) -> list[Leftover]:
    found: list[Leftover] = []
    for kind, argv in _LISTINGS.items():
        for line in _listing(argv).splitlines():
            _id, _, name = line.partition(" ")
            if marker not in name:
                continue
            if kind == "image" and _podman("manifest", "exists", name).returncode == 0:
                kind_here = "manifest"
            else:
                kind_here = kind
            found.append(Leftover(kind_here, name))
    return sorted(
        set(found), key=lambda item: ("container", "manifest", "image", "volume").index(item.kind)
    )


def remove(leftovers: list[Leftover]) -> None:
    """Containers first (they hold images), then manifest lists, images, volumes."""
    commands = {
        "container": ("rm", "-f", "-t", "0"),
        "manifest": ("manifest", "rm"),
        "image": ("rmi", "-f"),
        "volume": ("volume", "rm", "-f"),
    }
    for leftover in leftovers:
        _podman(*commands[leftover.kind], leftover.name)
