"""HTTP for the OCI distribution API: stdlib http.client, bounded time, careful redirects.

Imported only by the commands that ask a registry (http.client and ssl cost start-up time).
Every network failure is one EnvironmentUnusable (exit 3) with its cause. A 401 with
`WWW-Authenticate: Bearer realm=...` is retried with a token from the realm (with the user's
credentials as Basic auth when their auth file has some). Credentials and tokens go only into
Authorization headers, and only to the registry's own origin and the token realm its own 401
names (docker's and containerd's rule): a Link page or a redirect elsewhere gets none, a 401
from elsewhere is refused. One deadline bounds each whole answer, whatever the server's pace.
https goes through `HTTPS_PROXY` (an http:// proxy) unless `NO_PROXY` or loopback says not.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple
from urllib.parse import SplitResult, quote, unquote, urlencode, urljoin, urlsplit

from uvdock import __version__
from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.registry import oci
from uvdock.registry.auth import Credentials

MAX_BODY = 16 * 1024 * 1024  # manifests are at most 4 MiB (distribution spec); tag pages less
MAX_REDIRECTS = 5
MAX_PAGES = 1000


class Response(NamedTuple):
    status: int
    headers: http.client.HTTPMessage
    body: bytes
    url: str


class Manifest(NamedTuple):
    media_type: str
    body: dict[str, Any]
    digest: str  # the registry's Docker-Content-Digest, else the sha256 of the bytes


class RegistryClient:
    """One repository on one registry, for the length of one command (one time budget)."""

    def __init__(
        self,
        base_url: str,
        repository: str,
        *,
        credentials: Credentials | None = None,
        connect_timeout: float = 5.0,
        total_timeout: float = 30.0,
        page_size: int = 0,
        log: Callable[[str], None] | None = None,
        hint: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url, self.repository = base_url.rstrip("/"), repository
        self.credentials, self.page_size = credentials, page_size
        self.connect_timeout, self.total_timeout = connect_timeout, total_timeout
        self._log, self._hint, self._env = log or (lambda _message: None), hint, env or {}
        self._deadline = time.monotonic() + total_timeout
        self._authorization: str | None = None  # a bearer token, once the registry asked
        self._ssl: ssl.SSLContext | None = None

    def _api(self, path: str) -> str:
        return f"{self.base_url}/v2/{self.repository}/{path}"

    def manifest(self, reference: str) -> Manifest | None:
        url = self._api("manifests/" + quote(reference, safe=":"))
        response = self.get(url, accept=oci.MANIFEST_ACCEPT)
        if response.status == 404:
            return None
        body = self._json(response, "manifest " + reference)
        media_type = oci.manifest_media_type(response.headers.get("Content-Type"), body)
        sha256 = "sha256:" + hashlib.sha256(response.body).hexdigest()
        return Manifest(media_type, body, response.headers.get("Docker-Content-Digest") or sha256)

    def blob_json(self, digest: str) -> dict[str, Any]:
        return self._json(self.get(self._api("blobs/" + digest), accept="*/*"), "blob " + digest)

    def tags(self) -> list[str]:
        url = self._api("tags/list")
        if self.page_size > 0:
            url += "?" + urlencode({"n": self.page_size})
        tags, seen = [], set[str]()
        while url and url not in seen and len(seen) < MAX_PAGES:
            seen.add(url)
            response = self.get(url, accept="application/json")
            tags.extend(oci.tags_page(self._json(response, "tag list")))
            try:
                link = oci.next_page(response.headers.get("Link"), url)
            except ValueError as exc:
                raise self._unusable(f"the registry's Link header is malformed: {exc}") from None
            url = self._follow(url, link, "tag pages") if link else ""
        return tags

    def _follow(self, current: str, location: str, what: str) -> str:
        try:
            target = urljoin(current, location)
            oci.checked_split(target)
        except ValueError as exc:
            raise self._unusable(
                f"{_origin(current)} sent uvdock to a malformed URL: {exc}"
            ) from None
        if not oci.redirect_allowed(current, target):
            raise self._unusable(
                f"{_origin(current)} sent uvdock to {_origin(target)}; uvdock follows {what}"
                " only to https or to the same loopback host"
            )
        return target

    def get(self, url: str, *, accept: str) -> Response:
        headers = {"Accept": accept}
        if self._authorization and oci.same_origin(url, self.base_url):
            headers["Authorization"] = self._authorization  # never to a page elsewhere
        response = self._request(url, headers)
        if response.status != 401:
            return response
        if not oci.same_origin(response.url, self.base_url):
            raise self._unusable(
                f"{_origin(response.url)} asked for credentials after {_origin(self.base_url)} "
                f"sent uvdock there; credentials for {_origin(self.base_url)} go only to it "
                "and to the token realm it names"
            )
        challenge = oci.parse_challenge(response.headers.get("WWW-Authenticate", ""))
        self._authorization = self._authenticate(challenge)
        if self._authorization is not None:
            response = self._request(url, {**headers, "Authorization": self._authorization})
        if self._authorization is None or response.status in (401, 403):
            raise self._denied(response.status)
        return response

    def _authenticate(self, challenge: oci.Challenge | None) -> str | None:
        if challenge is not None and challenge.scheme == "basic" and self.credentials:
            return self.credentials.basic_header()
        if challenge is None or challenge.scheme != "bearer" or "realm" not in challenge.params:
            return None
        realm = challenge.params["realm"]
        if problem := oci.url_problem(realm):
            raise self._unusable(f"the token realm is not acceptable: {problem}")
        query = oci.bearer_realm_query(challenge)
        headers = {"Accept": "application/json"}
        if self.credentials is not None:
            query["account"] = self.credentials.username
            headers["Authorization"] = self.credentials.basic_header()
            self._log(f"registry: credentials from {self.credentials.source}")
        url = realm + ("&" if "?" in realm else "?") + urlencode(query)
        response = self._request(url, headers)
        if response.status in (401, 403):
            raise self._denied(response.status, token=True)
        body = self._json(response, "token")
        token = body.get("token") or body.get("access_token")
        if not isinstance(token, str) or not token:
            raise self._unusable(f"the token endpoint {_origin(realm)} sent no token")
        return "Bearer " + token

    def _request(self, url: str, headers: Mapping[str, str]) -> Response:
        current, sent = url, {"User-Agent": f"uvdock/{__version__}", **headers}
        for _ in range(MAX_REDIRECTS + 1):
            response = self._exchange(current, sent)
            location = response.headers.get("Location")
            if response.status not in (301, 302, 303, 307, 308) or not location:
                return response
            target = self._follow(current, location, "redirects")
            if not oci.same_origin(current, target):
                sent.pop("Authorization", None)
            self._log(f"registry: redirected to {_origin(target)}")
            current = target
        raise self._unusable(f"more than {MAX_REDIRECTS} redirects from {_origin(url)}")

    def _exchange(self, url: str, headers: Mapping[str, str]) -> Response:
        try:
            parts = oci.checked_split(url)
        except ValueError as exc:  # e.g. a registry host from an image name
            raise self._unusable(f"cannot ask a malformed URL: {exc}") from None
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise self._timed_out()
        connection = self._connection(parts, min(self.connect_timeout, remaining))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        done, fired = threading.Event(), threading.Event()

        # The one deadline, whatever the server's pace: a socket timeout counts per receive (a
        # byte every half second never trips it), so at the deadline the socket is shut down,
        # ending any wait on it (TLS, headers, body); until the connect made one, try again.
        def watch() -> None:
            if done.wait(remaining):
                return
            fired.set()
            while not done.is_set():
                if connection.sock is not None:
                    with contextlib.suppress(OSError):  # the plain socket's, even under TLS
                        socket.socket.shutdown(connection.sock, socket.SHUT_RDWR)
                done.wait(0.05)

        threading.Thread(target=watch, daemon=True).start()
        try:
            connection.connect()
            assert connection.sock is not None  # the connect timeout ends here
            connection.sock.settimeout(max(0.001, self._deadline - time.monotonic()))
            connection.request("GET", target, headers=dict(headers))
            raw = connection.getresponse()
            body = raw.read(MAX_BODY + 1)
            if len(body) > MAX_BODY:
                raise self._unusable(f"the registry's answer is larger than {MAX_BODY} bytes")
            if fired.is_set():  # the body was cut short by the deadline, not complete
                raise self._timed_out()
            self._log(f"registry: GET {_origin(url)}{parts.path} -> {raw.status}")
            return Response(raw.status, raw.headers, body, url)
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, TimeoutError) or fired.is_set():
                raise self._timed_out() from None
            raise self._unusable(f"cannot reach {_origin(url)}: {_describe(exc)}") from None
        finally:
            done.set()
            connection.close()

    def _connection(self, url: SplitResult, timeout: float) -> http.client.HTTPConnection:
        netloc = url.netloc
        if url.scheme != "https":
            return http.client.HTTPConnection(netloc, timeout=timeout)  # loopback only
        self._ssl = self._ssl or ssl.create_default_context()
        if (proxy := https_proxy(netloc, self._env)) is None:
            return http.client.HTTPSConnection(netloc, timeout=timeout, context=self._ssl)
        try:
            parts = oci.checked_split(proxy)
        except ValueError as exc:  # the user's own setting: its text may hold a password
            raise InputRefused(
                f"HTTPS_PROXY is malformed ({exc}); nothing was asked",
                hint="set it to http://HOST:PORT",
            ) from None
        if parts.scheme != "http" or not parts.hostname:
            raise self._unusable(
                f"HTTPS_PROXY {_origin(proxy)}: only http:// proxies are supported"
            )
        self._log(f"registry: through the proxy {_origin(proxy)}")
        connection = http.client.HTTPSConnection(
            parts.hostname, parts.port or 80, timeout=timeout, context=self._ssl
        )
        login = Credentials(unquote(parts.username or ""), unquote(parts.password or ""), "")
        auth = {"Proxy-Authorization": login.basic_header()} if parts.username is not None else {}
        connection.set_tunnel(netloc, headers=auth)  # port 443 unless netloc names one
        return connection

    def _json(self, response: Response, what: str) -> dict[str, Any]:
        if not 200 <= response.status < 300:
            answered = f"{_origin(response.url)} answered HTTP {response.status}"
            raise self._unusable(f"{answered} for {urlsplit(response.url).path}")
        try:
            data = json.loads(response.body)
        except (ValueError, RecursionError):  # bad bytes or syntax, huge integers, deep nesting
            data = None
        if not isinstance(data, dict):
            raise self._unusable(f"the {what} from {_origin(response.url)} is not a JSON object")
        return data

    def _unusable(self, message: str) -> EnvironmentUnusable:
        return EnvironmentUnusable(f"registry: {message}", hint=self._hint)

    def _timed_out(self) -> EnvironmentUnusable:
        return self._unusable(
            f"no complete answer from {_origin(self.base_url)} within {self.total_timeout:g} s"
        )

    def _denied(self, status: int, *, token: bool = False) -> EnvironmentUnusable:
        detail = (
            f"the credentials from {self.credentials.source} were refused"
            if self.credentials
            else "anonymous access was refused; log in with `docker login` or `podman login`"
        )
        return self._unusable(
            f"{_origin(self.base_url)} denied access to {self.repository} (HTTP {status} from"
            f" {'its token endpoint' if token else 'it'}): {detail}"
        )


def https_proxy(netloc: str, env: Mapping[str, str]) -> str | None:
    """The proxy for an https host, as curl reads https_proxy / HTTPS_PROXY and no_proxy."""
    proxy = env.get("https_proxy") or env.get("HTTPS_PROXY")
    host = (urlsplit(f"//{netloc}").hostname or "").lower()
    no_proxy = (env.get("no_proxy") or env.get("NO_PROXY") or "").lower().split(",")
    bypass = {entry.strip().lstrip(".").split(":")[0] for entry in no_proxy} - {""}
    suffixes = {host.split(".", i)[i] for i in range(host.count(".") + 1)}  # host, its domains
    if not proxy or oci.is_loopback(host) or bypass & {"*", *suffixes}:
        return None
    return proxy if "://" in proxy else "http://" + proxy


def _origin(url: str) -> str:
    """scheme://host[:port] without userinfo, path or query: safe to show."""
    parts = urlsplit(url)
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname or ""
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted ({exc.verify_message})"
    return str(getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)
