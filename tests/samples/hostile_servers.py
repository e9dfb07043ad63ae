"""Loopback servers for the hostile registry tests; each records every request it received.

`Recording` answers from a table of routes (plain HTTP or TLS). `Drip` sends its headers, then
one body byte every half second. `Silent` accepts and never answers; `Slammer` accepts and
closes at once. A leak of credentials then fails a test instead of going unseen.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

Route = tuple[int, dict[str, str], bytes]


class Recording:
    """Answers each path from `routes` ({port} in a header is its own port); keeps the
    path and headers of every request in `requests`."""

    def __init__(self, routes: dict[str, Route], tls: ssl.SSLContext | None = None) -> None:
        self.routes = routes
        self.requests: list[tuple[str, dict[str, str]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append((self.path, dict(self.headers.items())))
                path = self.path if self.path in owner.routes else self.path.partition("?")[0]
                status, headers, body = owner.routes.get(path, (404, {}, b"{}"))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value.replace("{port}", str(owner.port)))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port: int = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def authorizations(self) -> list[str | None]:
        return [headers.get("Authorization") for _, headers in self.requests]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Raw:
    """A listening socket whose connections `handle` serves, one thread each."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.accepted = 0
        self.received: list[bytes] = []
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._handle_safely, args=(conn,), daemon=True).start()

    def _handle_safely(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            self.handle(conn)

    def handle(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def _head(self, conn: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head and not self._stop.is_set():
            data = conn.recv(4096)
            if not data:
                break
            head += data
        self.received.append(head)

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()


class Drip(_Raw):
    """Headers at once, then one body byte every `pace` seconds, for as long as it is read."""

    def __init__(self, pace: float = 0.5) -> None:
        self.pace = pace
        super().__init__()

    def handle(self, conn: socket.socket) -> None:
        self._head(conn)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        )
        while not self._stop.is_set():
            conn.sendall(b" ")
            time.sleep(self.pace)


class Silent(_Raw):
    """Reads the request and never answers."""

    def handle(self, conn: socket.socket) -> None:
        self._head(conn)
        self._stop.wait()


class Slammer(_Raw):
    """Accepts, then closes without a word."""

    def handle(self, conn: socket.socket) -> None:
        conn.close()


def tls_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ssl.SSLContext:
    """A server context for a certificate (localhost, registry.proxied.test for the proxy
    tests, 127.0.0.1) this process's clients trust through SSL_CERT_FILE."""
    key, cert = tmp_path / "tls.key", tmp_path / "tls.crt"
    if not cert.exists():
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,DNS:registry.proxied.test,IP:127.0.0.1",
             "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True,
        )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context
