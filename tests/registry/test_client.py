"""The registry client's limits, against real HTTP(S) servers on loopback.

Time bounds, the redirect policy, and Authorization never crossing to another origin. The
registry conversation itself is tested against a real registry in
tests/commands/test_image_registry.py.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from samples.hostile_servers import Recording as Server
from samples.hostile_servers import tls_context

from uvdock.errors import EnvironmentUnusable
from uvdock.registry.auth import Credentials
from uvdock.registry.client import RegistryClient, https_proxy


@pytest.fixture
def serve() -> Iterator[list[Server]]:
    servers: list[Server] = []
    yield servers
    for server in servers:
        server.close()


def client(url: str, **options: Any) -> RegistryClient:
    return RegistryClient(url, "nvidia/pytorch", **options)


def test_a_registry_that_never_answers_costs_the_total_timeout_only() -> None:
    with socket.socket() as silent:  # connects (the kernel accepts), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        started = time.monotonic()
        with pytest.raises(EnvironmentUnusable, match=r"no complete answer .* within 1 s"):
            client(f"http://127.0.0.1:{silent.getsockname()[1]}", total_timeout=1).tags()
        assert time.monotonic() - started < 3


def test_redirects_to_the_same_loopback_host_are_followed(serve: list[Server]) -> None:
    tags = b'{"name": "nvidia/pytorch", "tags": ["26.09-py3"]}'
    routes = {
        "/v2/nvidia/pytorch/tags/list": (307, {"Location": "/moved/tags"}, b""),
        "/moved/tags": (200, {"Content-Type": "application/json"}, tags),
    }
    serve.append(Server(routes))
    assert client(f"http://127.0.0.1:{serve[0].port}").tags() == ["26.09-py3"]


def test_redirects_to_plain_http_elsewhere_are_refused(serve: list[Server]) -> None:
    other = Server({})
    serve.append(other)
    target = f"http://127.0.0.1:{other.port}/v2/nvidia/pytorch/tags/list"
    serve.append(Server({"/v2/nvidia/pytorch/tags/list": (302, {"Location": target}, b"")}))
    with pytest.raises(EnvironmentUnusable, match="follows redirects only to https"):
        client(f"http://127.0.0.1:{serve[1].port}").tags()
    assert other.requests == []


def test_redirect_loops_end(serve: list[Server]) -> None:
    loop = {
        "/v2/nvidia/pytorch/tags/list": (302, {"Location": "/v2/nvidia/pytorch/tags/list"}, b"")
    }
    serve.append(Server(loop))
    with pytest.raises(EnvironmentUnusable, match="more than 5 redirects"):
        client(f"http://127.0.0.1:{serve[0].port}").tags()


@pytest.fixture
def tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ssl.SSLContext:
    return tls_context(tmp_path, monkeypatch)


def test_authorization_stays_with_its_origin_across_an_https_redirect(
    serve: list[Server], tls: ssl.SSLContext
) -> None:
    storage = Server({"/blob": (200, {}, b'{"architecture": "arm64", "os": "linux"}')}, tls)
    serve.append(storage)
    location = f"https://localhost:{storage.port}/blob"
    challenge = 'Bearer realm="http://127.0.0.1:{port}/token",service="s",scope="x"'
    routes = {
        "/v2/nvidia/pytorch/blobs/sha256:abc": (401, {"WWW-Authenticate": challenge}, b""),
        "/token?service=s&scope=x&account=ci-bot": (200, {}, b'{"token": "T0KEN"}'),
    }
    registry = Server(routes)
    serve.append(registry)
    secret = Credentials("ci-bot", "pa55word", "auth.json")
    api = client(f"http://127.0.0.1:{registry.port}", credentials=secret)
    with pytest.raises(EnvironmentUnusable, match="denied access"):
        api.blob_json("sha256:abc")  # the registry keeps asking: denied, not retried forever
    registry.routes["/v2/nvidia/pytorch/blobs/sha256:abc"] = (307, {"Location": location}, b"")
    assert api.blob_json("sha256:abc") == {"architecture": "arm64", "os": "linux"}
    sent = dict(registry.requests)
    assert sent["/token?service=s&scope=x&account=ci-bot"]["Authorization"] == (
        secret.basic_header()
    )
    assert registry.requests[-1][1]["Authorization"] == "Bearer T0KEN"
    assert [headers.get("Authorization") for _, headers in storage.requests] == [None]


class ConnectProxy:
    """An HTTP CONNECT proxy on loopback that sends every tunnel to one local port."""

    def __init__(self, target_port: int) -> None:
        self.requests: list[list[str]] = []  # the CONNECT request's lines
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.target_port = target_port
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            head += client.recv(4096)
        self.requests.append(head.decode().split("\r\n")[:-2])
        upstream = socket.create_connection(("127.0.0.1", self.target_port))
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=_relay, args=(source, sink), daemon=True).start()

    def close(self) -> None:
        # close() alone leaves the thread blocked in accept() holding the listening socket:
        # the port stays open after the test, and a later test's connection can land in it.
        # shutdown() wakes accept() up, so the socket is really gone.
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()


def _relay(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        sink.close()


def test_https_goes_through_https_proxy_with_its_credentials(
    serve: list[Server], tls: ssl.SSLContext
) -> None:
    tags = b'{"name": "nvidia/pytorch", "tags": ["26.09-py3"]}'
    registry = Server({"/v2/nvidia/pytorch/tags/list": (200, {}, tags)}, tls)
    serve.append(registry)
    proxy = ConnectProxy(registry.port)
    try:
        env = {"HTTPS_PROXY": f"http://me:pr0xy-pw@127.0.0.1:{proxy.port}", "NO_PROXY": "nvcr.io"}
        api = client("https://registry.proxied.test", env=env)
        assert api.tags() == ["26.09-py3"]
    finally:
        proxy.close()
    connect = proxy.requests[0]
    assert connect[0].startswith("CONNECT registry.proxied.test:443 HTTP/1.")
    credentials = base64.b64encode(b"me:pr0xy-pw").decode()
    assert f"Proxy-Authorization: Basic {credentials}" in connect
    assert registry.requests[0][1]["Host"] == "registry.proxied.test"


def test_no_proxy_and_loopback_bypass_the_proxy() -> None:
    env = {"https_proxy": "proxy.example:3128", "no_proxy": "localhost,.nvidia.com"}
    assert https_proxy("nvcr.io", env) == "http://proxy.example:3128"
    assert https_proxy("authn.nvidia.com", env) is None
    assert https_proxy("nvidia.com:443", env) is None
    assert https_proxy("127.0.0.1:5000", env) is None
    assert https_proxy("nvcr.io", {"NO_PROXY": "*", "HTTPS_PROXY": "http://p:1"}) is None
    assert https_proxy("nvcr.io", {}) is None
