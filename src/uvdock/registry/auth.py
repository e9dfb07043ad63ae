"""Registry credentials from the user's docker / podman auth file, never shown.

Files in podman's order (containers-auth.json(5)), then docker's; the first one holding an
entry for the registry wins. Entries are keyed by host, by host/namespace (podman; the longest
matching one wins) or by URL (`https://nvcr.io/v1/`). Credential helpers (`credHelpers`,
`credsStore`) start processes and are not consulted.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class Credentials:
    """A user name and secret that repr() and str() never reveal."""

    __slots__ = ("_secret", "source", "username")

    def __init__(self, username: str, secret: str, source: str) -> None:
        self.username, self._secret, self.source = username, secret, source  # source: its auth file

    def basic_header(self) -> str:
        return "Basic " + base64.b64encode(f"{self.username}:{self._secret}".encode()).decode()

    def __repr__(self) -> str:
        return f"Credentials(<hidden>, source={self.source!r})"  # str() says the same


def auth_files(env: Mapping[str, str], uid: int | None = None) -> list[Path]:
    """Podman writes /run/containers/$UID/auth.json when XDG_RUNTIME_DIR is unset (root)."""
    home = Path(env.get("HOME") or Path.home())
    runtime = env.get("XDG_RUNTIME_DIR") or f"/run/containers/{os.getuid() if uid is None else uid}"
    return [
        *([Path(env["REGISTRY_AUTH_FILE"])] if env.get("REGISTRY_AUTH_FILE") else []),
        Path(runtime, "containers" if env.get("XDG_RUNTIME_DIR") else "", "auth.json"),
        Path(env.get("XDG_CONFIG_HOME") or home / ".config", "containers", "auth.json"),
        Path(env.get("DOCKER_CONFIG") or home / ".docker", "config.json"),
    ]


def _entry_key(key: str) -> str:
    """`https://index.docker.io/v1/` -> `docker.io`; `nvcr.io/nvidia/` -> `nvcr.io/nvidia`."""
    if key.startswith(("https://", "http://")):  # a URL names a host, its path is the API's
        key = key.split("://", 1)[1].partition("/")[0]
    key = key.rstrip("/").lower()
    return "docker.io" if key in ("index.docker.io", "registry-1.docker.io") else key


def _matches(key: str, host: str, repository: str) -> int:
    """How specific a match the entry is (0: none)."""
    namespace = key.removeprefix(host + "/")
    inside = namespace != key and f"{repository}/".startswith(f"{namespace}/")
    return 1 if key == host else 2 + namespace.count("/") if inside else 0


def _decode(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    encoded = entry.get("auth")
    if isinstance(encoded, str) and encoded:
        try:
            user, sep, secret = base64.b64decode(encoded, validate=True).decode().partition(":")
        except ValueError:  # not base64 (binascii.Error), not ASCII, not UTF-8
            return None
        return (user, secret) if sep else None
    name, password = entry.get("username"), entry.get("password")
    if isinstance(name, str) and isinstance(password, str) and name:
        return name, password
    return None


def find_credentials(
    host: str, repository: str, env: Mapping[str, str], uid: int | None = None
) -> Credentials | None:
    """The user's credentials for `host` (host[:port]) and `repository`, or None (anonymous)."""
    for path in auth_files(env, uid):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # ValueError: bad text, syntax, huge ints
            continue  # an unreadable or broken auth file holds none, as for the engines
        auths = data.get("auths") if isinstance(data, dict) else None
        found = [
            (score, decoded)
            for key, entry in (auths.items() if isinstance(auths, dict) else ())
            if isinstance(entry, Mapping)
            and (score := _matches(_entry_key(str(key)), host.lower(), repository))
            and (decoded := _decode(entry))
        ]
        if found:  # the first of the most specific
            return Credentials(*max(found, key=lambda f: f[0])[1], str(path))
    return None
