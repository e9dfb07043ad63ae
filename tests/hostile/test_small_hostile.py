"""The smaller hostile inputs of issue 20, item 10: each refused cleanly, none stuck or lost.

Real git repositories (real conflicts, real linked worktrees), real concurrent processes.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, git
from samples.lock_conflicts import make_conflict

from uvdock.files import state_store

# -- a symlinked uv.lock pointing outside the repository -------------------------------------


def test_a_lock_linked_outside_is_refused_before_any_state_is_saved(
    wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    name = "uv.lock"
    conflict = make_conflict(tmp_path, wheelhouse, "rebase")
    repo = conflict.repo
    outside = tmp_path / f"outside-{name}"
    outside.write_bytes((repo / name).read_bytes())
    (repo / name).unlink()
    (repo / name).symlink_to(outside)
    before = outside.read_bytes()
    argv = ("--repo", repo, "--engine", "local", "lock", "resolve", "--onto", "main", "--no-fetch")
    for _ in range(2):  # and the next run is refused the same way, not "did not finish"
        result = run_cli(*argv)
        assert result.code == 2, result.out + result.err
        assert "symlink" in result.err and "outside the repository" in result.err
        assert not state_store.state_dir(repo / ".git").exists()
    assert outside.read_bytes() == before
    assert (repo / name).is_symlink()
    assert run_cli("--repo", repo, "lock", "resolve", "--abort").code == 2  # nothing to abort


# -- merge-driver install from two linked worktrees at once ------------------------------------


def _install(worktree: Path, *options: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "uvdock", "--repo", str(worktree), "merge-driver", "install"]
    return subprocess.Popen(
        [*argv, *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_two_worktrees_installing_at_once_keep_every_attribute_line(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo({"pyproject.toml": '[project]\nname = "demo"\nversion = "0.1"\n'})
    first, second = tmp_path / "wt-a", tmp_path / "wt-b"
    git(repo, "worktree", "add", "-q", str(first), "-b", "a")
    git(repo, "worktree", "add", "-q", str(second), "-b", "b")
    attributes = repo / ".git" / "info" / "attributes"
    for _round in range(12):
        attributes.unlink(missing_ok=True)
        git(repo, "config", "--remove-section", "merge.uvdock-lock", check=False)
        git(repo, "config", "--remove-section", "merge.uvdock-pyproject", check=False)
        both = [_install(first, "--pyproject"), _install(second)]
        for child in both:
            _out, err = child.communicate(timeout=120)
            assert child.returncode == 0, err
        lines = attributes.read_text().splitlines()
        assert sorted(lines) == [
            "pyproject.toml merge=uvdock-pyproject",
            "uv.lock merge=uvdock-lock",
        ], lines


# -- build-target = "jet" ------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["uvdock.toml", "environment"])
def test_a_configured_jet_target_is_refused_unless_named_on_the_command_line(
    where: str, megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    if where == "uvdock.toml":
        (megatron_repo / "uvdock.toml").write_text('build-target = "jet"\n')
    else:
        monkeypatch.setenv("UVDOCK_BUILD_TARGET", "JET")  # Docker stage names ignore case
    # docker: podman 4.3 refuses this Dockerfile's heredocs before the target is looked at.
    build = ("--repo", megatron_repo, "--dry-run", "--engine", "docker", "image", "build")
    refused = run_cli(*build)
    assert refused.code == 2, refused.out + refused.err
    assert "internal secret" in refused.err and "--target jet" not in refused.out
    named = run_cli(*build, "--target", "jet")
    assert named.code == 0, named.err
    assert "--target jet" in named.out


def test_the_default_build_stops_at_main(megatron_repo: Path, run_cli: RunCli) -> None:
    done = run_cli("--repo", megatron_repo, "--dry-run", "--engine", "docker", "image", "build")
    assert done.code == 0 and "--target main" in done.out


# -- malformed registry URLs: the user's (exit 2) and a registry's answers (exit 3) -----------


class HostileRegistry:
    """A loopback HTTP server answering every request with one fixed hostile response."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes = b"{}") -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def no_auth_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("REGISTRY_AUTH_FILE", "DOCKER_CONFIG", "XDG_CONFIG_HOME", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))


USER_REGISTRY_URLS = [
    "http://127.0.0.1:99999",
    "https://nvcr.io:abc",
    "http://[::1",
    "https://[::1:5000/",
    "https://nvcr.io:-1",
]


@pytest.mark.parametrize("url", USER_REGISTRY_URLS)
def test_a_malformed_uvdock_registry_is_refused_as_input(
    url: str,
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    no_auth_files: None,
) -> None:
    monkeypatch.setenv("UVDOCK_REGISTRY", url)
    result = run_cli("--repo", megatron_repo, "image", "tags")
    assert result.code == 2, result.out + result.err
    assert "malformed" in result.err or "not an http" in result.err


USER_PROXIES = ["http://[::1", "http://proxy.example.invalid:99999", "http://u:s3cret@proxy:abc"]


@pytest.mark.parametrize("proxy", USER_PROXIES)
def test_a_malformed_https_proxy_is_refused_as_input(
    proxy: str,
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    no_auth_files: None,
) -> None:
    monkeypatch.setenv("UVDOCK_REGISTRY", "https://registry.example.invalid")
    monkeypatch.setenv("HTTPS_PROXY", proxy)
    monkeypatch.delenv("https_proxy", raising=False)
    result = run_cli("--repo", megatron_repo, "image", "tags")
    assert result.code == 2, result.out + result.err
    assert "HTTPS_PROXY is malformed" in result.err
    assert "s3cret" not in result.out + result.err


REGISTRY_ANSWERS = {
    "redirect unclosed bracket": (307, {"Location": "http://[::1/v2/x"}),
    "redirect bad port": (307, {"Location": "http://127.0.0.1:99999/v2/x"}),
    "redirect port not a number": (302, {"Location": "https://example.invalid:x/v2/"}),
    "link bad port": (
        200,
        {"Link": '<http://127.0.0.1:abc/v2/nvidia/pytorch/tags/list?n=1>; rel="next"'},
    ),
    "link unclosed bracket": (200, {"Link": '<http://[::1/v2/next>; rel="next"'}),
    "realm bad port": (401, {"WWW-Authenticate": 'Bearer realm="http://127.0.0.1:99999/t"'}),
    "realm port not a number": (
        401,
        {"WWW-Authenticate": 'Bearer realm="https://auth.example.invalid:x/t"'},
    ),
}


@pytest.mark.parametrize("case", list(REGISTRY_ANSWERS))
def test_a_registrys_malformed_url_is_an_unusable_environment(
    case: str,
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    no_auth_files: None,
) -> None:
    status, headers = REGISTRY_ANSWERS[case]
    body = b'{"name": "nvidia/pytorch", "tags": ["26.09-py3"]}'
    server = HostileRegistry(status, {"Content-Type": "application/json", **headers}, body)
    try:
        monkeypatch.setenv("UVDOCK_REGISTRY", server.url)
        result = run_cli("--repo", megatron_repo, "image", "tags")
    finally:
        server.close()
    assert result.code == 3, result.out + result.err
    assert result.err.startswith("error: registry:"), result.err


# -- a kill during a large mark-broken: the next run removes the temporary files -------------


def test_the_next_run_removes_the_temporary_files_a_killed_run_left(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    import signal
    import time

    from samples.recipes import MODEL, RECIPES

    # 600 files: the kill comes 50 ms after the first temporary file, while about 50 of them
    # exist (measured with 400), and well before the last one is renamed.
    files = {f"{RECIPES}/model{n:04d}.yaml": MODEL for n in range(600)}
    repo = make_repo(files)
    recipes = repo / RECIPES
    mark = ("recipe", "mark-broken", "alpha", "--issue", "513", "--reason", "hangs")
    argv = [sys.executable, "-m", "uvdock", "--repo", str(repo), *mark]
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not any(recipes.glob("*.uvdock")):
        assert child.poll() is None and time.monotonic() < deadline, "never wrote a temp file"
        time.sleep(0.01)
    time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert len(list(recipes.glob("*.uvdock"))) > 0  # what the killed run left
    again = run_cli("--repo", repo, *mark)
    assert again.code in (0, 1), again.err
    assert list(recipes.glob(".*.uvdock")) == []
    assert list(recipes.glob("*.uvdock")) == []
