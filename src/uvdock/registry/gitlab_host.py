"""The GitLab container registry: its host, taken from a git remote URL (any form: https with
credentials and port, `git@host:path`, `ssh://`, `git+ssh://`, `host:path`). A registry address
with a port (`host:5005/...`) is the documented cause of "access forbidden": the host is
returned without credentials and without a port."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from uvdock.errors import InputRefused

# scp-like syntax (git's rule): [user@]host:path, with no slash before the first colon.
_SCP_LIKE = re.compile(r"^(?:[^@/\s]+@)?(?P<host>\[[^\]/]+\]|[^:/\s\[\]@]+):(?!//)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def registry_host(remote_url: str) -> str | None:
    """The bare host of a git remote URL, or None for a local path / file:// remote."""
    url = remote_url.strip()
    if _SCHEME.match(url):
        try:
            parts = urlsplit(url)
            host = parts.hostname
        except ValueError as exc:  # e.g. an unclosed IPv6 bracket: bad configuration
            raise InputRefused(f"git remote URL {url!r} is malformed: {exc}") from None
        return None if parts.scheme == "file" else host or None
    match = _SCP_LIKE.match(url)
    host = match["host"].strip("[]").lower() if match else ""
    windows = len(host) == 1 and url[2:3] in ("\\", "/")  # "C:\\repo" is a path, not host "c"
    return host if host and not windows else None


def registry_image(host: str, image: str) -> str:
    """`<host>/<image path:tag>` as `docker pull` takes it."""
    return f"{host}/{image.lstrip('/')}"


def resolves(host: str) -> bool:
    """Whether `host` has an address here: asked after a failed pull, so a name that does not
    resolve is reported as that (DNS, VPN, proxy) rather than as a login problem."""
    import socket

    try:
        socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    return True
