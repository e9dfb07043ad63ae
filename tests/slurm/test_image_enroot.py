"""`uvdock image enroot` with real enroot 4.1.2 and podman, on a machine whose docker CLI
has no daemon (issue 21 item 6), then `--engine srun` on what it wrote."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from samples.slurm import remove_unpacked, six_repo, uvdock

from uvdock.run import slurm

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]


def _podman_names(*what: str) -> set[str]:
    out = subprocess.run(["podman", *what], capture_output=True, text=True, check=False)
    return set(out.stdout.split())


def test_import_on_podman_with_a_silent_docker_then_srun_uses_it(
    sqsh: Path, slurm_tmp: Path, engine_image: str
) -> None:
    repo = six_repo(slurm_tmp)
    containers = _podman_names("ps", "--all", "--format", "{{.Names}}")
    # The docker CLI is installed; nothing answers on the socket it is pointed at. enroot as
    # released (.ci/slurm-setup builds it beside the patched one): `docker rm` hard-coded.
    silent = {"DOCKER_HOST": f"unix://{slurm_tmp}/no-daemon.sock"}
    upstream = sqsh.parent.parent / "enroot-upstream" / "bin"
    if upstream.is_dir():
        silent["PATH"] = f"{upstream}{os.pathsep}{os.environ.get('PATH', '')}"
        silent["ENROOT_SQUASH_OPTIONS"] = "-comp lz4 -noD"  # as the cluster's config: faster
    done = uvdock(repo, "--engine", "auto", "--image", engine_image, "image", "enroot", env=silent)
    assert done.code == 0, done.err
    written = repo / "megatron-lm.sqsh"
    assert written.read_bytes()[:4] == slurm.SQUASHFS_MAGIC
    assert f"from podman's {engine_image}" in done.out
    # enroot's temporary container (enroot.XXXX) and the derived image with a CMD are gone
    # (other tests may start and remove their own meanwhile: only ours are compared).
    left = _podman_names("ps", "--all", "--format", "{{.Names}}") - containers
    assert not [n for n in left if n.startswith("enroot.")]
    images = _podman_names("images", "--format", "{{.Repository}}:{{.Tag}}")
    assert not [i for i in images if i.startswith("localhost/uvdock-enroot-")]
    name = slurm.PYXIS_PREFIX + slurm.container_name(str(written), repo, 0)
    try:
        locked = uvdock(repo, "--image", engine_image, "lock")  # the local tag: its .sqsh
        assert locked.code == 0, locked.err
        assert f"image {written}" in locked.out
    finally:
        remove_unpacked([name])
