"""Fixtures shared by every test module: real git repositories and the CLI run in-process.

How tests here stay fast and parallel-safe (`uv run pytest` runs them on pytest-xdist, one
worker per core, `-n auto` in pyproject.toml; budget: the whole suite, engine tests included,
in 120 s on a 2-core machine):

- Each worker is its own pytest session: a session fixture runs once per worker. Anything that
  costs seconds of CPU (an image build) is built once per run with `samples.run_shared`
  (`built_once`, under a lock in the folder all workers share; `remove_at_run_end` for its
  images), as `ci_image` in tests/commands/test_sync_ci_image.py does, the registries'
  pushed storage (`registries`) and the wheelhouse. What holds per-session state (the registry
  processes over that storage, with their token endpoint) runs once per worker. (`xdist_group` does not group under pytest 9.2: pytest-xdist #1386.)
- Names on the machine are unique per run: containers, images, tags and manifests carry
  `unique_name(...)` (pid + random), never a fixed name; each test removes what it creates
  (`remove_container`, `podman rmi -f`), also when it fails (a fixture's teardown or `finally`).
  What only needs podman's store for a while (the registry pushes), or must break it (a
  manifest list whose images are gone), uses a store of its own (`own_storage` in
  samples/engine_leftovers), never the machine's: one broken list fails `podman images` for
  every process on the machine.
- Files go under `tmp_path` / `tmp_path_factory`, never in the repository or a fixed /tmp path;
  ports come from the kernel (port 0 / `free_port()`), never a fixed number.
- No sleeping for a fixed time where a condition can be polled (wait for a file, a socket, a
  process state, with a deadline). A process that waits on the network gets an answer at once
  (`UV_OFFLINE=1`, `-e UV_HTTP_RETRIES=0` via `UVDOCK_ENGINE_ARGS`) when the network is not what
  the test is about.
- Hypothesis: keep `max_examples` to what finds bugs here (tens to a few hundred) and create
  expensive state (git repositories) once per test, not once per example.
- Look where the time goes with `uv run pytest --durations=30`; time one test with `-n 0`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest

# Bytecode caches on, whatever the environment says: with PYTHONDONTWRITEBYTECODE set (as on
# the machines this suite is measured on), every worker and each of the ~300 `python -m
# uvdock` children compiled its imports from source on every run (collection: 3.9 s of CPU
# per worker, 1.8 s with caches). pyproject.toml's `compile-bytecode` does it for the venv.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

from samples.engine_leftovers import TEST_RUN
from samples.engine_leftovers import engine_name as engine_name
from samples.oci_registry import Registries, push_storage, require_tools, serve
from samples.run_shared import built_once, remove_run_objects, run_folder
from samples.wheels import build_wheelhouse, project_pyproject

from uvdock.cli import main as cli

# The slurm tier's fixtures (sqsh, cluster_user, slurm_tmp): a module, not a conftest.py in
# tests/slurm/, since test modules import this conftest by its plain name.
pytest_plugins = ["samples.slurm_fixtures"]

REPO_ROOT = Path(__file__).resolve().parents[1]
# Real Megatron-LM files kept in this repository (Apache-2.0, see their NOTICE.md files), so a
# user's clone runs every test that reads them.
MEGATRON_LM = REPO_ROOT / "examples" / "megatron-lm"
MEGATRON_LM_HISTORY = REPO_ROOT / "tests" / "data" / "megatron-lm-history"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "uvdock tests",
    "GIT_AUTHOR_EMAIL": "tests@uvdock.invalid",
    "GIT_COMMITTER_NAME": "uvdock tests",
    "GIT_COMMITTER_EMAIL": "tests@uvdock.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    # Every git the tests and uvdock start sees these, as if given with `git -c`. The suite
    # makes about 1,800 repositories: `git maintenance run --auto` after each commit and
    # the unsigned-commit `git config` per repository were 3,000 processes of a run.
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "commit.gpgsign",
    "GIT_CONFIG_VALUE_0": "false",
    "GIT_CONFIG_KEY_1": "maintenance.auto",
    "GIT_CONFIG_VALUE_1": "false",
    "GIT_CONFIG_KEY_2": "gc.auto",
    "GIT_CONFIG_VALUE_2": "0",
}


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. Much of a test's time is spent waiting on podman,
    git and uv processes, not in Python (2252 tests on 2 cores, quiet machine, a second run:
    111 s with 3 workers, 97 s with 4, 103 s with 6)."""
    return 2 * (os.cpu_count() or 1)


_DANGLING_AT_START = pytest.StashKey[set[str]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    """The controller notes the dangling layerless images already there (see the end)."""
    if hasattr(session.config, "workerinput") or shutil.which("podman") is None:
        return
    from samples import engine_leftovers

    with contextlib.suppress(RuntimeError):  # podman does not work: no test can make any
        session.config.stash[_DANGLING_AT_START] = engine_leftovers.dangling_layerless()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controller (or the only session) removes what the workers built for the whole run,
    then the dangling layerless images that appeared during it: no name carries a marker, so
    no worker can tell they are its own, and with one of them in the store any broken
    manifest list fails `podman images` for every process on the machine."""
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the others may still use what it built
    factory: pytest.TempPathFactory = session.config._tmp_path_factory  # type: ignore[attr-defined]
    remove_run_objects(run_folder(factory))
    before = session.config.stash.get(_DANGLING_AT_START, None)
    if before is None:
        return
    from samples import engine_leftovers

    try:
        new = sorted(engine_leftovers.dangling_layerless() - before)
        if not new:
            return
        engine_leftovers.remove([engine_leftovers.Leftover("dangling image", i) for i in new])
        still = sorted(engine_leftovers.dangling_layerless() & set(new))
    except RuntimeError as failed:
        message = str(failed)
    else:
        message = f"tests left {len(new)} dangling layerless podman image(s) behind: " + (
            ", ".join(i[:12] for i in new)
            + (
                f"; could not remove: {', '.join(i[:12] for i in still)}"
                if still
                else "; removed now"
            )
        )
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    (reporter.write_line if reporter is not None else print)(message)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _isolated_git(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(_empty_git_template(tmp_path_factory)))
    for key in list(os.environ):
        if key.startswith("UVDOCK_") and key not in ("UVDOCK_REQUIRE_ENGINE", "UVDOCK_TEST_IMAGE"):
            monkeypatch.delenv(key)


def _empty_git_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty `git init` template: a new repository is 2 files and 7 folders instead of 17
    and 10 (no sample hooks), fewer to write and for pytest to delete when it prunes old
    runs. Users with an empty `init.templateDir` have such repositories: no `.git/info`."""
    folder = tmp_path_factory.getbasetemp() / "git-template"
    folder.mkdir(exist_ok=True)
    return folder


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return path


def commit_all(repo: Path, message: str = "commit") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def diverged(
    make_repo: Callable[..., Path], base: str, ours: str, theirs: str, path: str = "pyproject.toml"
) -> Path:
    """A repository whose `main` (checked out) wrote `ours` over `base` and whose branch
    `theirs` wrote `theirs`: ready for `git merge theirs`."""
    repo = make_repo({path: base})
    git(repo, "checkout", "-q", "-b", "theirs")
    (repo / path).write_text(theirs, encoding="utf-8")
    commit_all(repo, "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / path).write_text(ours, encoding="utf-8")
    commit_all(repo, "ours")
    return repo


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """A fresh committed git repository holding the given files (path -> str or bytes)."""
    counter = iter(range(1000))

    def make(files: dict[str, str | bytes] | None = None, name: str | None = None) -> Path:
        repo = init_repo(tmp_path / (name or f"repo{next(counter)}"))
        for rel, content in (files or {}).items():
            target = repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_bytes(content.encode())
        commit_all(repo, "initial")
        return repo

    return make


@pytest.fixture
def megatron_repo(tmp_path: Path) -> Path:
    """A committed git copy of the real Megatron-LM files in examples/megatron-lm."""
    repo = tmp_path / "megatron-lm"
    shutil.copytree(MEGATRON_LM, repo, ignore=shutil.ignore_patterns("NOTICE.md"))
    for path in repo.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    init_repo(repo)
    commit_all(repo, "megatron-lm snapshot")
    return repo


@dataclass
class CliResult:
    code: int
    out: str
    err: str


class RunCli(Protocol):
    """The `run_cli` fixture: `run_cli("lock", "--check")` runs `uvdock lock --check`."""

    def __call__(self, *args: str | Path) -> CliResult: ...


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Iterator[RunCli]:
    """Run `uvdock ARGS...` in-process; returns exit code, stdout and stderr."""

    def invoke(*args: str | Path) -> CliResult:
        capsys.readouterr()
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as exc:  # --help / --version
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    yield invoke


# -- real container engine -----------------------------------------------------------------

TEST_IMAGE = os.environ.get("UVDOCK_TEST_IMAGE", "localhost/uvdock-test:bookworm")


def _engine_missing_reason() -> str | None:
    if shutil.which("podman") is None:
        return "podman is not installed (run .ci/engine-setup)"
    probe = subprocess.run(
        ["podman", "image", "exists", TEST_IMAGE], capture_output=True, check=False
    )
    if probe.returncode != 0:
        return f"test image {TEST_IMAGE} is missing (run .ci/engine-setup)"
    return None


@pytest.fixture(scope="session")
def engine_image() -> str:
    """The podman test image; skips with the reason when absent (fails under UVDOCK_REQUIRE_ENGINE=1)."""
    reason = _engine_missing_reason()
    if reason:
        if os.environ.get("UVDOCK_REQUIRE_ENGINE") == "1":
            pytest.fail(f"UVDOCK_REQUIRE_ENGINE=1 but {reason}")
        pytest.skip(reason)
    return TEST_IMAGE


def unique_name(prefix: str) -> str:
    """`prefix-<pid>-<random>`: a container, image or tag name no parallel test run shares."""
    return f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def start_container(image: str, mount: Path, name: str) -> str:
    """A detached container of `image` with `mount` at /workspace, as developers keep one."""
    subprocess.run(
        [
            "podman",
            "run",
            "-d",
            "--name",
            name,
            "-v",
            f"{mount}:/workspace",
            image,
            "sleep",
            "infinity",
        ],
        check=True,
        capture_output=True,
    )
    return name


def remove_container(name: str) -> None:
    subprocess.run(["podman", "rm", "-f", "-t", "0", name], capture_output=True, check=False)


@pytest.fixture(scope="session")
def docker_host(engine_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """DOCKER_HOST for the real docker CLI, served by `podman system service`."""
    if shutil.which("docker") is None:
        if os.environ.get("UVDOCK_REQUIRE_ENGINE") == "1":
            pytest.fail("UVDOCK_REQUIRE_ENGINE=1 but the docker CLI is missing")
        pytest.skip("the docker CLI is not installed")
    import time

    sock = tmp_path_factory.mktemp("docker") / "podman.sock"
    service = subprocess.Popen(
        ["podman", "system", "service", "--time=0", f"unix://{sock}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    host = f"unix://{sock}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        ok = subprocess.run(["docker", "-H", host, "version"], capture_output=True, check=False)
        if ok.returncode == 0:
            break
        time.sleep(0.2)
    else:
        service.terminate()
        pytest.fail("podman system service did not answer the docker CLI within 20 s")
    yield host
    service.terminate()
    service.wait(timeout=10)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test wheels (tests/samples/wheels.py), built once per run and shared by every
    worker: read it, copy it, never write into it."""
    built = built_once(
        tmp_path_factory, "wheelhouse", lambda folder: {"path": str(build_wheelhouse(folder))}
    )
    return Path(built["path"])


@pytest.fixture
def uv_project(make_repo: Callable[..., Path], wheelhouse: Path) -> Callable[..., Path]:
    """A committed repo with a pyproject resolving from ./wheels (copied from the wheelhouse)."""

    def make(dependencies: tuple[str, ...] = ("alpha",), **kwargs: dict[str, list[str]]) -> Path:
        files: dict[str, str | bytes] = {
            "pyproject.toml": project_pyproject(dependencies, **kwargs)
        }
        for wheel in wheelhouse.iterdir():
            files[f"wheels/{wheel.name}"] = wheel.read_bytes()
        return make_repo(files)

    return make


# A real OCI registry on loopback (docker-registry), with token auth as NGC hands it out;
# started once per session by the first test that asks for it, over a storage pushed once
# per run.
@pytest.fixture(scope="session")
def registries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registries]:
    require_tools()
    storage = built_once(tmp_path_factory, "oci-storage", push_storage)["storage"]
    yield from serve(tmp_path_factory.mktemp("oci"), Path(storage))


@pytest.fixture
def registry(registries: Registries, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Registries:
    """The token-auth registry as UVDOCK_REGISTRY; no auth file of this machine's in sight."""
    for name in ("REGISTRY_AUTH_FILE", "DOCKER_CONFIG", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("UVDOCK_REGISTRY", registries.token_url)
    registries.token.reset()
    return registries


# -- nothing left behind in podman ---------------------------------------------------------

# Every podman object a test creates is named with engine_name() (samples/engine_leftovers).


@pytest.fixture(scope="session", autouse=True)
def _no_engine_leftovers() -> Iterator[None]:
    """At the end of the run: remove what the tests left in podman, and fail loudly if any."""
    yield
    if shutil.which("podman") is None:
        return
    from samples import engine_leftovers

    try:
        left = engine_leftovers.find(TEST_RUN)
    except RuntimeError as failed:
        usable = subprocess.run(["podman", "info"], capture_output=True, check=False)
        if usable.returncode != 0:
            return  # podman does not work here: no test could have created anything
        pytest.fail(str(failed), pytrace=False)
    if not left:
        return
    engine_leftovers.remove(left)
    still = engine_leftovers.find(TEST_RUN)
    listed = ", ".join(map(str, left))
    pytest.fail(
        f"tests left {len(left)} podman object(s) behind: {listed}; "
        + (f"could not remove: {', '.join(map(str, still))}" if still else "removed now"),
        pytrace=False,
    )
