"""One interrupt, one SIGINT, for a non-root user with rootless podman too.

As a contributor runs it: a user of their own (`uvdock-rootless`, made by .ci/engine-setup),
rootless podman with vfs storage, no network (`--network=none`, as rootless networking
often fails). The command is `sh -c 'sh counter.sh TAG; echo after'`: the grandchild shell
counts the SIGINTs that reach it, keeps running through a clean-up window and writes the
count. Seen before: the rootless podman client, signalled, ended the container outright,
so the grandchild was killed without its clean-up ("none"). Real podman; the image is
made of this machine's own dash and sleep.
"""

from __future__ import annotations

import importlib.util
import io
import os
import pty
import pwd
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import init_repo

pytestmark = pytest.mark.engine

USER = "uvdock-rootless"
PYTHON = "/usr/bin/python3"  # one the user can run (the test's own may live in root's home)
COUNTER = """n=0
trap 'n=$((n+1))' INT
: > ".started-$1"
i=0
while [ "$n" -eq 0 ] && [ "$i" -lt 3000 ]; do sleep 0.01; i=$((i+1)); done
sleep 0.3
echo "$n" > ".sigints-$1"
"""


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root to run uvdock as another user"
    for tool in ("podman", "setpriv", "newuidmap", "ldd"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (run .ci/engine-setup)"
    version = [PYTHON, "-c", "import sys; assert sys.version_info >= (3, 11)"]
    if not os.path.exists(PYTHON) or subprocess.run(version, check=False).returncode:
        return f"{PYTHON} is not Python 3.11 or later"
    try:
        pwd.getpwnam(USER)
    except KeyError:
        return f"no user {USER} (run .ci/engine-setup)"
    return None


# What `uvdock run` imports, copied where the user can read it (the checkout and its venv
# may sit in root's home)
RUNTIME = (
    "uvdock",
    "rich",
    "pygments",
    "markdown_it",
    "mdurl",
    "tomlkit",
    "packaging",
    "yaml",
)


def _importable(into: Path) -> Path:
    for name in RUNTIME:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            source = spec.submodule_search_locations[0]
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(source, into / name, ignore=ignore, dirs_exist_ok=True)
    return into


class Rootless:
    def __init__(self, home: Path, uid: int, image: str, repo: Path, lib: Path) -> None:
        self.home, self.uid, self.image, self.repo, self.lib = home, uid, image, repo, lib

    def as_user(self, argv: list[str]) -> list[str]:
        who = [f"--reuid={self.uid}", f"--regid={self.uid}", "--init-groups"]
        env = [f"HOME={self.home}", "PATH=/usr/bin:/bin", f"USER={USER}"]
        env += [f"PYTHONPATH={self.lib}"]
        env += ["UVDOCK_ENGINE_ARGS=--network=none"]
        return ["setpriv", *who, "env", "-i", *env, *argv]

    def podman(self, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            self.as_user(["podman", *args]), input=data, capture_output=True, check=False
        )


def _rootfs() -> bytes:
    """A tar of this machine's dash and sleep with the libraries they load."""
    files = {"/bin/dash", "/bin/sleep"}
    libs = subprocess.run(["ldd", *files], capture_output=True, text=True, check=True).stdout
    files |= {word for word in libs.split() if word.startswith("/") and ":" not in word}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in sorted(files):
            tar.add(os.path.realpath(name), arcname=name.lstrip("/"))
        link = tarfile.TarInfo("bin/sh")
        link.type, link.linkname = tarfile.SYMTYPE, "dash"
        tar.addfile(link)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def rootless() -> Iterator[Rootless]:
    reason = _missing()
    if reason:
        if os.environ.get("UVDOCK_REQUIRE_ENGINE") == "1":
            pytest.fail(f"UVDOCK_REQUIRE_ENGINE=1 but {reason}")
        pytest.skip(reason)
    user = pwd.getpwnam(USER)
    # Under /tmp, readable by the user (pytest's own folders are root's only)
    top = Path(tempfile.mkdtemp(prefix="uvdock-rootless-", dir="/tmp"))
    top.chmod(0o755)
    repo = init_repo(top / "repo")
    (repo / "counter.sh").write_text(COUNTER)
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(repo)], check=True)
    image = f"localhost/uvdock-rootless-test:{os.getpid()}"
    lib = _importable(top / "lib")
    subprocess.run(["chmod", "-R", "a+rX", str(lib)], check=True)
    setup = Rootless(Path(user.pw_dir), user.pw_uid, image, repo, lib)
    imported = setup.podman("import", "-q", "-", image, data=_rootfs())
    assert imported.returncode == 0, imported.stderr.decode()
    yield setup
    setup.podman("rmi", "--force", image)
    shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("kind", ["ctrl-c", "sigterm", "sigint"])
def test_a_rootless_interrupt_reaches_the_grandchild_once(rootless: Rootless, kind: str) -> None:
    tag = f"{kind}-{time.monotonic_ns()}"
    argv = [PYTHON, "-m", "uvdock", "-v"]
    argv += ["--repo", str(rootless.repo), "--engine", "podman", "--image", rootless.image]
    argv += ["run", "--", "sh", "-c", 'sh counter.sh "$0"; echo after', tag]
    child = subprocess.Popen(
        rootless.as_user(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120  # vfs copies the image for each container
    while not (rootless.repo / f".started-{tag}").exists():
        assert time.monotonic() < deadline, "the command never started"
        assert child.poll() is None, child.communicate()[1].decode()
        time.sleep(0.05)
    if kind == "ctrl-c":
        os.killpg(child.pid, signal.SIGINT)  # no terminal: the group's signal, as CI sends it
    else:
        child.send_signal(signal.SIGTERM if kind == "sigterm" else signal.SIGINT)
    _out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err.decode()
    counted = rootless.repo / f".sigints-{tag}"
    count = counted.read_text().strip() if counted.exists() else "none (killed before clean-up)"
    assert count == "1", err.decode()
    listing = rootless.podman("ps", "-a", "--format", "{{.Names}} {{.Command}}").stdout.decode()
    assert tag not in listing


def test_a_killed_uvdock_leaves_no_rootless_shell_container(rootless: Rootless) -> None:
    # `uvdock shell` on a terminal, uvdock a job of the user's shell, then kill -9 of
    # uvdock: the container's shell (whose pty conmon holds) must not wait on forever.
    tag = f"shell-{time.monotonic_ns()}"
    argv = [PYTHON, "-m", "uvdock", "--repo", str(rootless.repo), "--engine", "podman"]
    argv += ["--image", rootless.image, "shell", "--shell", "sh"]
    job = ["/bin/sh", "-c", '"$@"; exec sleep 60', "sh", *rootless.as_user(argv)]
    shell, master = pty.fork()
    if shell == 0:
        os.execv(job[0], job)
    mine = ["ps", "-a", "-q", f"--filter=volume={rootless.repo}"]
    try:
        os.write(master, f"echo up > .up-{tag}\n".encode())  # read once the shell is up
        deadline = time.monotonic() + 120  # vfs copies the image for each container
        while not (rootless.repo / f".up-{tag}").exists():
            assert time.monotonic() < deadline, "the shell never started"
            time.sleep(0.05)
        assert rootless.podman(*mine).stdout.split(), "the shell runs in no container"
        uvdock = subprocess.run(
            ["pgrep", "-f", "-u", str(rootless.uid), "-n", f"uvdock --repo {rootless.repo}"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        assert uvdock, "no uvdock process found"
        os.kill(int(uvdock[0]), signal.SIGKILL)
        deadline = time.monotonic() + 15
        while rootless.podman(*mine).stdout.split() and time.monotonic() < deadline:
            time.sleep(0.2)
        left = rootless.podman(*mine).stdout.split()
    finally:
        os.kill(shell, signal.SIGKILL)
        os.waitpid(shell, 0)
        os.close(master)
        for name in rootless.podman(*mine).stdout.split():
            rootless.podman("rm", "-f", "-t", "0", name.decode())
    assert left == [], "the shell's container outlived uvdock"
