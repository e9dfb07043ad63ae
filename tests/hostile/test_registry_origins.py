"""Issue 29, items 1-4: a hostile registry keeps the user's credentials, time and memory.

End to end as a user runs it: `uvdock image tags` / `image bump` against loopback servers
that record every header they receive, with credentials in a real auth file. A credential
(Basic, or a token obtained with it) goes only to the registry's own origin and to the token
realm its own 401 names.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunCli
from samples.hostile_servers import Drip, Recording, Route, Silent, Slammer, tls_context

from uvdock.files import repolock

SECRET = "pa55word-of-ci-bot"
BASIC = "Basic " + base64.b64encode(f"ci-bot:{SECRET}".encode()).decode()
TAGS = "/v2/nvidia/pytorch/tags/list"
PAGE = b'{"name": "nvidia/pytorch", "tags": ["26.09-py3"]}'


@pytest.fixture
def servers() -> Iterator[list[object]]:
    started: list[object] = []
    yield started
    for server in started:
        server.close()  # type: ignore[attr-defined]


def _use(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, registry: Recording) -> None:
    """UVDOCK_REGISTRY is `registry`, and the user's auth file holds credentials for it."""
    auth = tmp_path / "auth.json"
    entry = base64.b64encode(f"ci-bot:{SECRET}".encode()).decode()
    auth.write_text(json.dumps({"auths": {f"127.0.0.1:{registry.port}": {"auth": entry}}}))
    for name in ("DOCKER_CONFIG", "XDG_CONFIG_HOME", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(auth))
    monkeypatch.setenv("UVDOCK_REGISTRY", f"http://127.0.0.1:{registry.port}")
    monkeypatch.setenv("UVDOCK_REGISTRY_TIMEOUT", "10")


class _Sequence(dict):  # type: ignore[type-arg]
    """Routes that answer every path with the next of `first`, then `then` for ever."""

    def __init__(self, first: Iterator[Route], then: Route) -> None:
        super().__init__()
        self.first, self.then = first, then

    def __contains__(self, key: object) -> bool:
        return True

    def get(self, key: object, default: object = None) -> Route:
        return next(self.first, self.then)


def _answering(*first: Route, then: Route) -> Recording:
    registry = Recording({})
    registry.routes = _Sequence(iter(first), then)
    return registry


BASIC_CHALLENGE: Route = (401, {"WWW-Authenticate": 'Basic realm="r"'}, b"")


# -- 1. a tag list's Link header -----------------------------------------------------------


def test_a_link_to_another_origin_never_carries_credentials(
    servers: list[object],
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    elsewhere = Recording({TAGS: (200, {}, PAGE)}, tls_context(tmp_path, monkeypatch))
    plain = Recording({TAGS: (200, {}, PAGE)})
    servers += [elsewhere, plain]
    for other in (f"https://localhost:{elsewhere.port}", f"http://127.0.0.1:{plain.port}"):
        link = f'<{other}{TAGS}?last=26.09-py3>; rel="next"'
        registry = _answering(BASIC_CHALLENGE, then=(200, {"Link": link}, PAGE))
        servers.append(registry)
        _use(monkeypatch, tmp_path, registry)
        result = run_cli("--repo", megatron_repo, "image", "tags")
        assert registry.authorizations == [None, BASIC]
        assert SECRET not in result.out + result.err
        assert "Traceback" not in result.err
    assert elsewhere.authorizations == [None]  # followed without credentials (https)
    assert plain.requests == []  # plain http to another port: refused, never asked


def test_a_bearer_token_stays_with_the_registry_across_pages(
    servers: list[object],
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    elsewhere = Recording({TAGS: (200, {}, PAGE)}, tls_context(tmp_path, monkeypatch))
    servers.append(elsewhere)
    challenge = 'Bearer realm="http://127.0.0.1:{port}/token",service="s",scope="x"'
    link = f'<https://localhost:{elsewhere.port}{TAGS}?last=x>; rel="next"'
    registry = _answering(
        (401, {"WWW-Authenticate": challenge}, b""),
        (200, {}, b'{"token": "T0KEN"}'),
        then=(200, {"Link": link}, PAGE),
    )
    servers.append(registry)
    _use(monkeypatch, tmp_path, registry)
    result = run_cli("--repo", megatron_repo, "image", "tags")
    assert result.code == 0, result.err
    assert registry.authorizations == [None, BASIC, "Bearer T0KEN"]
    assert elsewhere.authorizations == [None]


# -- 2. a redirect target's own challenge ----------------------------------------------------


def test_a_redirect_targets_challenge_is_refused_naming_both_hosts(
    servers: list[object],
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    challenge = 'Bearer realm="https://localhost:{port}/token",service="s",scope="x"'
    target = Recording(
        {
            TAGS: (401, {"WWW-Authenticate": challenge}, b""),
            "/token": (200, {}, b'{"token": "STOLEN"}'),
        },
        tls_context(tmp_path, monkeypatch),
    )
    servers.append(target)
    registry = Recording({TAGS: (307, {"Location": f"https://localhost:{target.port}{TAGS}"}, b"")})
    servers.append(registry)
    _use(monkeypatch, tmp_path, registry)
    result = run_cli("--repo", megatron_repo, "image", "tags")
    assert result.code == 3, result.out + result.err
    assert target.authorizations == [None]  # asked once, anonymously; no token request
    assert registry.authorizations == [None]
    line = result.err.splitlines()[0]
    assert f"localhost:{target.port}" in line and f"127.0.0.1:{registry.port}" in line
    assert SECRET not in result.out + result.err


def test_a_redirect_elsewhere_is_followed_without_credentials(
    servers: list[object],
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    storage = Recording({TAGS: (200, {}, PAGE)}, tls_context(tmp_path, monkeypatch))
    servers.append(storage)
    moved: Route = (307, {"Location": f"https://localhost:{storage.port}{TAGS}"}, b"")
    registry = _answering(BASIC_CHALLENGE, then=moved)
    servers.append(registry)
    _use(monkeypatch, tmp_path, registry)
    result = run_cli("--repo", megatron_repo, "image", "tags")
    assert result.code == 0, result.err
    assert registry.authorizations == [None, BASIC]
    assert storage.authorizations == [None]


# -- 3. every wait has one end ---------------------------------------------------------------


def _uvdock(repo: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "uvdock", "--repo", str(repo), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _finish(child: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """The child's output; a child still waiting after `timeout` is killed and fails the test."""
    try:
        return child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        pytest.fail(f"uvdock still waited after {timeout:g} s")


def _env(port: int, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UVDOCK_")}
    env.update(
        UVDOCK_REGISTRY=f"http://127.0.0.1:{port}",
        UVDOCK_REGISTRY_TIMEOUT="3",
        XDG_RUNTIME_DIR=str(tmp_path / "run"),
        REGISTRY_AUTH_FILE=str(tmp_path / "none.json"),
    )
    return env


@pytest.mark.parametrize("kind", [Drip, Silent, Slammer])
def test_one_deadline_holds_whatever_the_servers_pace(
    kind: type[Drip | Silent | Slammer], megatron_repo: Path, tmp_path: Path
) -> None:
    server = kind()
    try:
        started = time.monotonic()
        child = _uvdock(megatron_repo, _env(server.port, tmp_path), "image", "bump", "26.09-py3")
        out, err = _finish(child, 20)
        took = time.monotonic() - started
    finally:
        server.close()
    assert child.returncode == 3, out + err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2, err  # the line and its hint
    assert server.accepted >= 1
    assert took < 3 + 5, f"{kind.__name__}: {took:.1f} s"  # 3 s and a loaded start-up
    if kind is not Slammer:
        assert "within 3 s" in err


def test_ctrl_c_in_a_slow_answer_exits_130_and_releases_the_lock(
    megatron_repo: Path, tmp_path: Path
) -> None:
    server = Drip()
    env = _env(server.port, tmp_path)
    env["UVDOCK_REGISTRY_TIMEOUT"] = "60"
    lock = repolock.lock_path(megatron_repo / ".git")
    try:
        child = _uvdock(megatron_repo, env, "image", "bump", "26.09-py3")
        deadline = time.monotonic() + 20
        while not server.accepted and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        assert lock.read_text().strip(), "the bump holds the lock while it asks"
        os.killpg(child.pid, signal.SIGINT)
        out, err = _finish(child, 10)
    finally:
        server.close()
    assert child.returncode == 130, out + err
    assert "Traceback" not in err
    assert lock.read_text() == ""  # released, not abandoned
    offline = {**env, "UVDOCK_OFFLINE": "1", "UVDOCK_LOCK_TIMEOUT": "1"}
    _out, other_err = _finish(_uvdock(megatron_repo, offline, "image", "bump", "26.09-py3"), 60)
    assert "locked by" not in other_err, other_err


# -- 4. malformed JSON --------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b"[" * 200_000, b'{"tags": [' + b"9" * 5000 + b"]}", b'{"tags": "\xff\xfe"}', b"[1]"],
    ids=["nested", "digits", "bytes", "not-an-object"],
)
def test_malformed_registry_json_is_exit_3_naming_the_host(
    body: bytes,
    servers: list[object],
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    registry = Recording({TAGS: (200, {}, body)})
    servers.append(registry)
    _use(monkeypatch, tmp_path, registry)
    result = run_cli("--repo", megatron_repo, "image", "tags")
    assert result.code == 3, result.out + result.err
    assert f"127.0.0.1:{registry.port}" in result.err.splitlines()[0]
    assert "crash" not in result.err.lower()
