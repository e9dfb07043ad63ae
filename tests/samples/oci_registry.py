"""A real OCI registry on loopback for the registry tests: CNCF distribution + podman pushes.

Two `docker-registry serve` processes share one storage folder: an open one the tests push
to with podman, and one that wants bearer tokens as nvcr.io does, issued by a small token
endpoint started here. The endpoint signs RS256 JWTs with the openssl CLI and a key made at
test time (no Python crypto dependency: openssl is there wherever podman is), and records
the Authorization header of every token request so tests can see credentials arrive.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from samples.engine_leftovers import own_storage

REPOSITORY = "nvidia/pytorch"
SERVICE = "uvdock-test-registry"
ISSUER = "uvdock-test-token-issuer"
# tag -> platforms it is pushed with; a list of two is a manifest list of that format.
TAGS: dict[str, tuple[str, ...]] = {
    "24.12-py3": ("amd64",),
    "25.11-py3": ("amd64", "arm64"),
    "26.06-py3": ("amd64", "arm64"),  # Megatron-LM's dev pin
    "26.09-py3": ("amd64", "arm64"),
    "26.09-py3-igpu": ("arm64",),
    "26.10-py3": ("amd64",),  # newest, but single-platform
    "latest": ("amd64",),
}
LIST_FORMAT = {"25.11-py3": "v2s2", "26.06-py3": "oci", "26.09-py3": "v2s2"}
# The environment NGC PyTorch images state their component versions in (values as NGC writes
# them); both platforms of a tag carry the same. 26.06 -> 26.09 moves PyTorch a minor release
# and CUDA a major one.
NGC_ENV: dict[str, dict[str, str]] = {
    "26.06-py3": {
        "NVIDIA_PYTORCH_VERSION": "26.06",
        "PYTORCH_VERSION": "2.8.0a0+5228986",
        "PYTORCH_BUILD_VERSION": "2.8.0a0+5228986c",
        "CUDA_VERSION": "12.9.1.010",
        "CUDNN_VERSION": "9.10.2.21",
        "NCCL_VERSION": "2.27.3",
        "TRT_VERSION": "10.11.0.33",
        "TRANSFORMER_ENGINE_VERSION": "2.4",
    },
    "26.09-py3": {
        "NVIDIA_PYTORCH_VERSION": "26.09",
        "PYTORCH_VERSION": "2.9.0a0+50eac81",
        "PYTORCH_BUILD_VERSION": "2.9.0a0+50eac81a",
        "CUDA_VERSION": "13.0.1.012",
        "CUDNN_VERSION": "9.13.0.50",
        "NCCL_VERSION": "2.27.7",
        "TRT_VERSION": "10.13.3.9",
        "TRANSFORMER_ENGINE_VERSION": "2.7",
    },
}


def missing_reason() -> str | None:
    for binary in ("docker-registry", "podman", "openssl"):
        if shutil.which(binary) is None:
            return f"{binary} is not installed (run .ci/engine-setup)"
    return None


def require_tools() -> None:
    reason = missing_reason()
    if reason:
        if os.environ.get("UVDOCK_REQUIRE_ENGINE") == "1":
            pytest.fail(f"UVDOCK_REQUIRE_ENGINE=1 but {reason}")
        pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Signer:
    """RS256 with an RSA key and a self-signed certificate (the registry's rootcertbundle)."""

    def __init__(self, folder: Path) -> None:
        self.key = folder / "token.key"
        self.cert = folder / "token.crt"
        request = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        subject = ["-subj", "/CN=uvdock-test-token"]
        files = ["-keyout", str(self.key), "-out", str(self.cert)]
        subprocess.run([*request, *subject, *files], check=True, capture_output=True)
        spki = subprocess.run(
            ["openssl", "pkey", "-in", str(self.key), "-pubout", "-outform", "DER"],
            check=True,
            capture_output=True,
        ).stdout
        # libtrust's key ID, which distribution looks a token's `kid` up by.
        digest = base64.b32encode(hashlib.sha256(spki).digest()[:30]).decode()
        self.kid = ":".join(digest[i : i + 4] for i in range(0, len(digest), 4))

    def token(self, access: list[dict[str, object]], subject: str) -> str:
        now = int(time.time())
        header = {"typ": "JWT", "alg": "RS256", "kid": self.kid}
        claims = {
            "iss": ISSUER, "sub": subject, "aud": SERVICE, "exp": now + 300,
            "nbf": now - 10, "iat": now, "jti": os.urandom(8).hex(), "access": access,
        }  # fmt: skip
        signing_input = ".".join(_b64url(json.dumps(p).encode()) for p in (header, claims))
        signature = subprocess.run(
            ["openssl", "dgst", "-sha256", "-sign", str(self.key)],
            input=signing_input.encode(),
            check=True,
            capture_output=True,
        ).stdout
        return f"{signing_input}.{_b64url(signature)}"


@dataclass
class TokenServer:
    """The realm: anonymous pull tokens, or (when `required` is set) only for that Basic auth."""

    signer: Signer
    seen: list[str] = field(default_factory=list)  # Authorization headers received ("" = none)
    required: str | None = None  # the expected Authorization header, when set
    server: ThreadingHTTPServer | None = None

    @property
    def realm(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/token"

    def reset(self, required: str | None = None) -> None:
        self.seen.clear()
        self.required = required

    def start(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                authorization = self.headers.get("Authorization", "")
                owner.seen.append(authorization)
                if owner.required is not None and authorization != owner.required:
                    self.send_response(401)
                    self.end_headers()
                    return
                query = parse_qs(urlsplit(self.path).query)
                access: list[dict[str, object]] = []
                for scope in query.get("scope", []):
                    kind, name, actions = scope.split(":")
                    access.append({"type": kind, "name": name, "actions": actions.split(",")})
                token = owner.signer.token(access, query.get("account", ["anonymous"])[0])
                body = json.dumps({"token": token, "expires_in": 300}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def relay(
    handler: BaseHTTPRequestHandler,
    upstream: str,
    path: str,
    rewrite: Callable[[int, bytes], tuple[bytes, dict[str, str]]] | None = None,
) -> None:
    """Answer `handler`'s GET with what `upstream` (host:port) answers for `path`, every header
    but Host passed on both ways; `rewrite(status, body)` may change the body and add headers."""
    headers = {k: v for k, v in handler.headers.items() if k.lower() != "host"}
    connection = http.client.HTTPConnection(upstream, timeout=10)
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    body, extra = response.read(), dict[str, str]()
    if rewrite is not None:
        body, extra = rewrite(response.status, body)
    handler.send_response(response.status)
    for key, value in response.getheaders():
        if key.lower() not in ("content-length", "connection", "date", "server"):
            handler.send_header(key, value)
    for key, value in extra.items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
    connection.close()


class PagingFront:
    """Tag-list paging (`?n=` + `Link: <...>; rel="next"`) in front of a real registry.

    distribution 2.8 (Debian's) answers tags/list in one piece whatever `n` says; v3 and
    large registries page. This front forwards every request and header unchanged and cuts
    only the tags/list answer into pages, as the distribution spec describes, keeping the
    registry's own (not time-sorted) order.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream).netloc
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> None:
        upstream = self.upstream

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)

                def paged(status: int, body: bytes) -> tuple[bytes, dict[str, str]]:
                    if parts.path.endswith("/tags/list") and status == 200:
                        return _page(body, parts.path, parse_qs(parts.query))
                    return body, {}

                relay(self, upstream, parts.path, paged)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _page(body: bytes, path: str, query: dict[str, list[str]]) -> tuple[bytes, dict[str, str]]:
    data = json.loads(body)
    tags: list[str] = data.get("tags") or []
    if "n" not in query:
        return body, {}
    size = int(query["n"][0])
    start = tags.index(query["last"][0]) + 1 if "last" in query else 0
    data["tags"] = tags[start : start + size]
    extra = {}
    if start + size < len(tags):
        extra["Link"] = f'<{path}?n={size}&last={data["tags"][-1]}>; rel="next"'
    return json.dumps(data).encode(), extra


def registry_config(storage: Path, port: int, auth: str = "") -> str:
    return (
        "version: 0.1\n"
        "log:\n  level: error\n  accesslog:\n    disabled: true\n"
        f"storage:\n  filesystem:\n    rootdirectory: {storage}\n  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n  secret: uvdock-tests\n{auth}"
    )


def token_auth(token: TokenServer) -> str:
    return (
        "auth:\n  token:\n"
        f"    realm: {token.realm}\n    service: {SERVICE}\n    issuer: {ISSUER}\n"
        f"    rootcertbundle: {token.signer.cert}\n"
    )


def start_registry(folder: Path, name: str, config: str) -> tuple[subprocess.Popen[bytes], str]:
    """`docker-registry serve CONFIG`; returns once /v2/ answers (200, or 401 with auth)."""
    path = folder / f"{name}.yml"
    path.write_text(config)
    log = (folder / f"{name}.log").open("wb")
    process = subprocess.Popen(["docker-registry", "serve", str(path)], stdout=log, stderr=log)
    url = "http://" + config.split("addr: ")[1].split("\n")[0]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/v2/", timeout=1).close()
            return process, url
        except urllib.error.HTTPError:
            return process, url  # 401: up, and asking for a token
        except OSError:
            if process.poll() is not None:
                break
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"docker-registry did not start: {(folder / f'{name}.log').read_text()}")


def registry_version() -> str:
    out = subprocess.run(["docker-registry", "--version"], capture_output=True, text=True)
    return out.stdout.strip()


def tiny_tarball(folder: Path) -> Path:
    """A one-file root filesystem, owned by root (a rootless podman maps it to the user)."""
    rootfs = folder / "rootfs"
    rootfs.mkdir(exist_ok=True)
    (rootfs / "hello.txt").write_text("uvdock registry test\n")
    tarball = folder / "tiny.tar"
    owner = ["--owner=0", "--group=0", "--numeric-owner"]
    subprocess.run(["tar", *owner, "-C", str(rootfs), "-cf", str(tarball), "."], check=True)
    return tarball


# One push: the tag, its platforms (two or more: a manifest list), its ENV, the list's format.
Push = tuple[str, tuple[str, ...], dict[str, str], str]


def push_images(folder: Path, host: str, pushes: Iterable[Push]) -> None:
    """A tiny image per architecture for each push, with its ENV (podman import --arch
    --change), pushed alone or as a manifest list of its format. podman works in a store of
    its own under `folder`, removed afterwards: nothing of the pushes is ever in the machine's
    store (lists and their images removed there left a dangling layerless image behind)."""
    store = folder / "podman"
    store.mkdir()
    podman = functools.partial(
        subprocess.run, check=True, capture_output=True, env=own_storage(store)
    )
    tarball = tiny_tarball(folder)
    try:
        for tag, platforms, env, fmt in pushes:
            changes = [a for key, value in env.items() for a in ("--change", f"ENV {key}={value}")]
            images = {arch: f"localhost/regtest:{tag}-{arch}" for arch in platforms}
            target = f"docker://{host}/{REPOSITORY}:{tag}"
            for arch, image in images.items():
                podman(["podman", "import", "-q", "--arch", arch, *changes, str(tarball), image])
            if len(platforms) == 1:
                podman(["podman", "push", "-q", "--tls-verify=false", images[platforms[0]], target])
                continue
            listed = f"localhost/regtest-list:{tag}"
            podman(["podman", "manifest", "create", listed])
            for image in images.values():
                podman(["podman", "manifest", "add", listed, "containers-storage:" + image])
            podman(["podman", "manifest", "push", "-q", "--all", "--format", fmt,
                    "--tls-verify=false", listed, target])  # fmt: skip
    finally:
        shutil.rmtree(store)


def push_tags(folder: Path, host: str) -> None:
    """TAGS pushed; the tags of NGC_ENV carry that environment."""
    pushes = [(t, p, NGC_ENV.get(t, {}), LIST_FORMAT.get(t, "")) for t, p in TAGS.items()]
    push_images(folder, host, pushes)


@dataclass
class Registries:
    open_url: str
    token_url: str  # behind a PagingFront: tags/list pages when asked with ?n=
    token: TokenServer
    version: str


def push_storage(folder: Path) -> dict[str, str]:
    """A registry storage folder with TAGS pushed into it, through a registry started for the
    push and stopped after. Built once per test run (samples.run_shared.built_once): the pushes
    are ~50 podman commands, and every worker's registries serve the same storage."""
    storage = folder / "storage"
    storage.mkdir()
    process, open_url = start_registry(folder, "push", registry_config(storage, free_port()))
    try:
        push_tags(folder, open_url.removeprefix("http://"))
    finally:
        process.terminate()
        process.wait(timeout=10)
    return {"storage": str(storage)}


def serve(folder: Path, storage: Path) -> Iterator[Registries]:
    """Both registries over `storage` (see push_storage) and the token endpoint; stopped
    afterwards. The tests only read from them."""
    token = TokenServer(Signer(folder))
    token.start()
    processes = []
    try:
        process, open_url = start_registry(folder, "open", registry_config(storage, free_port()))
        processes.append(process)
        config = registry_config(storage, free_port(), token_auth(token))
        process, token_url = start_registry(folder, "token", config)
        processes.append(process)
        front = PagingFront(token_url)
        front.start()
        try:
            yield Registries(open_url, front.url, token, registry_version())
        finally:
            front.stop()
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
        token.stop()
