"""`uvdock sync` in a CI-like image built by `uvdock image build`: it removes nothing.

The image has Megatron-LM's shape: FROM an NGC-style pin, a `main` stage and a `jet` stage
that needs a build secret (skipped by --target main), /opt/venv synced with
`uv sync --extra ${IMAGE_TYPE} --extra mlm --extra ssm ${GROUP} --locked --no-install-package`
from a local wheel folder, a conditional group, a package the "base image" provides, and one
more package added with `uv pip install` afterwards. Everything runs offline.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import (
    RunCli,
    commit_all,
    engine_name,
    init_repo,
    remove_container,
    start_container,
    unique_name,
)
from samples.run_shared import built_once, remove_at_run_end
from samples.wheels import build_wheelhouse, make_wheel, project_pyproject

pytestmark = pytest.mark.engine

FAKE_BASE = "nvcr.io/nvidia/pytorch:25.99-py3"

DOCKERFILE = """\
# syntax=docker/dockerfile:1.3-labs
ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:25.99-py3
FROM ${FROM_IMAGE_NAME} AS main
ARG UV_PROJECT_ENVIRONMENT=/opt/venv
ENV UV_PROJECT_ENVIRONMENT=${UV_PROJECT_ENVIRONMENT}
ENV UV_LINK_MODE=copy
COPY pyproject.toml uv.lock /workspace/
COPY wheels/ /workspace/wheels/
COPY extra-wheels/ /opt/extra-wheels/
ARG IMAGE_TYPE=dev
ENV IMAGE_TYPE=${IMAGE_TYPE}
WORKDIR /workspace
# lowpin stands for torch: the base image's system Python provides it, seen through
# --system-site-packages; the sync must never install or remove it.
RUN uv pip install --system --break-system-packages --no-deps \\
        /workspace/wheels/lowpin-1.0.0-py3-none-any.whl
RUN EXTRA_GROUP="" && \\
    if [ "$IMAGE_TYPE" != "lts" ]; then EXTRA_GROUP="--group no_pypi_wheels"; fi && \\
    uv venv ${UV_PROJECT_ENVIRONMENT} --system-site-packages --allow-existing && \\
    uv sync --extra ${IMAGE_TYPE} --extra mlm --extra ssm ${EXTRA_GROUP} --link-mode copy \\
        --locked \\
        --no-install-package lowpin
RUN uv pip install --no-index --find-links /opt/extra-wheels epsilon

##### For NVIDIANS only #####
FROM main AS jet
RUN --mount=type=secret,id=JET_INDEX_URLS cat /run/secrets/JET_INDEX_URLS
"""

PYPROJECT = project_pyproject(
    ("alpha",),
    extras={"dev": ["alpha>=1.1"], "lts": [], "mlm": ["beta"], "ssm": ["lowpin"]},
    groups={"no_pypi_wheels": ["gamma<2"], "test": ["delta"]},
)


def _podman(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check)


def _freeze(*where: str) -> set[str]:
    out = _podman(*where, "uv", "pip", "freeze")
    return {line.strip() for line in out.stdout.splitlines() if "==" in line}


def _build_ci_image(engine_image: str, folder: Path) -> dict[str, str]:
    repo = init_repo(folder / "repo")
    build_wheelhouse(repo / "wheels")
    make_wheel(repo / "extra-wheels", "epsilon", "1.0.0")
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "docker").mkdir()
    (repo / "docker/Dockerfile.ci.dev").write_text(DOCKERFILE)
    (repo / "docker/.ngc_version.dev").write_text(FAKE_BASE + "\n")
    locked = _podman(
        "run",
        "--rm",
        "-v",
        f"{repo}:/workspace",
        "-w",
        "/workspace",
        engine_image,
        "uv",
        "lock",
        check=False,
    )
    assert locked.returncode == 0, locked.stderr
    commit_all(repo, "ci-like project")
    # The pin names an NGC image; the local test image stands in for it (no pull happens).
    _podman("tag", engine_image, FAKE_BASE)
    # Shared by every worker and removed when the whole run ends (samples/run_shared.py), so
    # it carries no worker's leak-check marker.
    tag = unique_name("localhost/uvdock-ci-like")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "uvdock",
            "--repo",
            str(repo),
            "--engine",
            "podman",
            "image",
            "build",
            "--tag",
            tag,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return {"tag": tag, "repo": str(repo)}


@pytest.fixture(scope="session")
def ci_image(engine_image: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The CI-like image, built once per test run by `uvdock image build`, and its repository
    (shared by every xdist worker: samples/run_shared.py)."""
    built = built_once(
        tmp_path_factory, "ci-image", lambda folder: _build_ci_image(engine_image, folder)
    )
    remove_at_run_end(tmp_path_factory, built["tag"])
    return built["tag"], Path(built["repo"])


IMAGE_SELECTION = {"alpha==1.1.0", "beta==2.0.0", "gamma==1.0.0", "epsilon==1.0.0"}
PROTECTED_PROBE = ("/opt/venv/bin/python", "-c", "import lowpin; print(lowpin.__file__)")


def _protected_in_place(*where: str) -> str:
    out = _podman(*where, *PROTECTED_PROBE)
    assert "/usr/" in out.stdout  # the system Python's copy, not the venv's
    return out.stdout.strip()


def test_the_image_holds_the_dockerfile_selection(ci_image: tuple[str, Path]) -> None:
    tag, _ = ci_image
    frozen = _freeze("run", "--rm", tag)
    assert frozen >= IMAGE_SELECTION
    assert not any(line.startswith("delta==") for line in frozen)  # group test is not in it
    assert not any(line.startswith("lowpin==") for line in frozen)  # never in the venv
    _protected_in_place("run", "--rm", tag)


def test_sync_in_exec_placement_removes_nothing(
    ci_image: tuple[str, Path], run_cli: RunCli
) -> None:
    tag, repo = ci_image
    name = engine_name("ci-like")
    start_container(tag, repo, name)
    try:
        before = _freeze("exec", name)
        assert before >= IMAGE_SELECTION
        protected = _protected_in_place("exec", name)
        result = run_cli("--repo", repo, "--container", name, "sync")
        assert result.code == 0, result.err
        after = _freeze("exec", name)
        assert _protected_in_place("exec", name) == protected
    finally:
        remove_container(name)
    assert before <= after, f"removed: {sorted(before - after)}"
    assert after - before == {"delta==4.0.0"}  # the profile's group, new to the image


def _uvdock(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """uvdock as a user runs it, so uv's own output (written by the child) is captured too."""
    argv = [sys.executable, "-m", "uvdock", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def test_sync_with_only_an_image_is_refused(ci_image: tuple[str, Path]) -> None:
    tag, repo = ci_image
    result = _uvdock("--repo", repo, "--engine", "podman", "--image", tag, "sync")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "removed when uv exits" in result.stderr and "--container NAME" in result.stderr
    assert "Installed" not in result.stderr and "+ delta" not in result.stdout + result.stderr
    # The hint works as printed: start the container it names, then sync into it.
    start, then = re.findall(r"`([^`]+)`", result.stderr.split("hint:", 1)[1])[-2:]
    argv = shlex.split(start)
    name = argv[argv.index("--name") + 1]
    try:
        subprocess.run(argv, check=True, capture_output=True)
        assert then == f"uvdock --container {name} --repo {repo} sync"  # this very sync
        synced = _uvdock(*shlex.split(then)[1:])
        assert synced.returncode == 0, synced.stderr
    finally:
        remove_container(name)


@pytest.fixture
def ci_container(ci_image: tuple[str, Path], tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A long-lived container of the CI-like image on a copy of its repository."""
    tag, source = ci_image
    repo = tmp_path / "repo"
    shutil.copytree(source, repo, symlinks=True)
    name = engine_name("ci-like")
    start_container(tag, repo, name)
    yield name, repo
    remove_container(name)


def test_exact_shows_what_uv_would_remove_first(ci_container: tuple[str, Path]) -> None:
    name, repo = ci_container
    result = _uvdock("--repo", repo, "--container", name, "sync", "--exact")
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    # epsilon came from `uv pip install`: only --exact removes it, and it is named before uv
    # runs the real sync (whose own report lists the same removal).
    listed = said.index("--exact: uv will uninstall")
    assert "  - epsilon==1.0.0" in said[listed:]
    assert said.index("- epsilon==1.0.0", listed) < said.rindex("- epsilon==1.0.0")
    assert not any(line.startswith("epsilon==") for line in _freeze("exec", name))


@pytest.mark.parametrize("action", ["remove", "add"])
def test_add_and_remove_keep_what_other_groups_installed(
    action: str, ci_container: tuple[str, Path]
) -> None:
    # The case: `remove pandas` in a running CI container also uninstalled the test
    # group's iniconfig. Here the test group's delta is installed by `uvdock sync`; uv's own
    # sync after `uv remove` / `uv add` would uninstall it (and epsilon, and the mlm extra).
    name, repo = ci_container
    synced = _uvdock("--repo", repo, "--container", name, "sync")
    assert synced.returncode == 0, synced.stderr
    before = _freeze("exec", name)
    protected = _protected_in_place("exec", name)
    assert {"delta==4.0.0", "epsilon==1.0.0", "beta==2.0.0"} <= before
    words = ["remove", "alpha"] if action == "remove" else ["add", "gamma<2"]
    result = _uvdock("--repo", repo, "--container", name, *words)
    assert result.returncode == 0, result.stdout + result.stderr
    after = _freeze("exec", name)
    assert before <= after, f"removed: {sorted(before - after)}"
    assert _protected_in_place("exec", name) == protected  # never installed into the venv
    assert "syncing the environment in running container" in result.stdout
    pyproject = (repo / "pyproject.toml").read_text()
    assert ('"alpha"' not in pyproject) if action == "remove" else ('"gamma<2"' in pyproject)
