"""The OCI distribution API as data: challenges, paging links, manifests, platforms, tag order.
The transport (registry/client.py) hands it the headers and bodies it received."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple
from urllib.parse import SplitResult, urljoin, urlsplit

from uvdock.errors import InputRefused
from uvdock.registry.tags import is_tag, tag_key
from uvdock.ui.redact import url_credentials

# Lists first: a registry serving a tag as a list must not fall back to one platform's manifest.
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
MANIFEST_ACCEPT = ", ".join((OCI_INDEX, DOCKER_LIST, OCI_MANIFEST, DOCKER_MANIFEST))


class Challenge(NamedTuple):
    scheme: str  # lower-cased: "bearer" or "basic"
    params: dict[str, str]  # realm, service, scope, ... (keys lower-cased)


class Platform(NamedTuple):
    os: str
    architecture: str
    variant: str = ""

    def __str__(self) -> str:
        return "/".join(self[:2] + ((self.variant,) if self.variant else ()))


def split_image(image: str) -> tuple[str, str]:
    """`nvcr.io/nvidia/pytorch` -> ("nvcr.io", "nvidia/pytorch"); Docker Hub as docker reads it."""
    first, sep, rest = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return "docker.io", image if sep else f"library/{image}"


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    loopback_names = ("localhost", "ip6-localhost", "ip6-loopback", "::1")
    return name in loopback_names or re.fullmatch(r"127(?:\.[0-9]+){3}", name) is not None


def checked_split(url: str) -> SplitResult:
    """urlsplit, with the host and port read now: a bad port or an unclosed IPv6 bracket
    raises ValueError here, where the caller decides whose mistake it is, not later."""
    parts = urlsplit(url)
    _ = parts.hostname, parts.port
    return parts


def url_problem(url: str) -> str | None:
    """Why uvdock will not talk to `url` (None: it will): https anywhere, http on loopback only."""
    try:
        parts = checked_split(url.strip())
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket, a port that is no port
        return f"`{url}` is malformed: {exc}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"`{url}` is not an http(s) URL"
    if url_credentials(url):  # over http(s), any userinfo
        return "the URL must not hold credentials"
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        return f"plain http is allowed only for a loopback registry, not {parts.hostname}"
    return None


def registry_url(url: str, origin: str) -> str:
    if problem := url_problem(url):
        hint = "set it to the registry's base URL, e.g. https://nvcr.io"
        if problem.startswith("plain http"):  # it parsed, and userinfo was refused before
            hint = f"use https://{urlsplit(url.strip()).netloc}"
        raise InputRefused(f"{origin}: {problem}", hint=hint)
    parts = urlsplit(url.strip())
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def redirect_allowed(origin: str, target: str) -> bool:
    """Follow a redirect only to https, or to the same host over loopback http."""
    dest = urlsplit(target)
    same_loopback = dest.netloc == urlsplit(origin).netloc and is_loopback(dest.hostname or "")
    return (
        bool(dest.hostname) if dest.scheme == "https" else dest.scheme == "http" and same_loopback
    )


def same_origin(a: str, b: str) -> bool:
    """Credentials go only where they were meant for: same scheme, host and port."""
    left, right = urlsplit(a), urlsplit(b)
    return (left.scheme, left.netloc.lower()) == (right.scheme, right.netloc.lower())


_AUTH_PARAM = re.compile(r'\s*([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')


def parse_challenge(header: str) -> Challenge | None:
    """`Bearer realm="...",service="...",scope="..."` (RFC 6750) or `Basic realm="..."`."""
    scheme, _, rest = header.strip().partition(" ")
    if not scheme:
        return None
    params, position = {}, 0
    while match := _AUTH_PARAM.match(rest, position):  # each match moves on by a name and "="
        value = match[2] if match[2] is not None else match[3]
        params[match[1].lower()] = re.sub(r"\\(.)", r"\1", value)
        position = match.end()
    return Challenge(scheme.lower(), params)


def bearer_realm_query(challenge: Challenge) -> dict[str, str]:
    """The token request's query: service and scope as the challenge gave them."""
    return {key: challenge.params[key] for key in ("service", "scope") if key in challenge.params}


_LINK = re.compile(r"<([^>]*)>\s*((?:;\s*[^;,]+)*)")


def next_page(link_header: str | None, current_url: str) -> str | None:
    """The `rel="next"` target of a Link header, absolute (registries send a path)."""
    for match in _LINK.finditer(link_header or ""):
        rels = re.findall(r';\s*rel\s*=\s*"?([^";]+)"?', match[2])
        if any("next" in rel.split() for rel in rels):
            return urljoin(current_url, str(match[1]))
    return None


def is_list(media_type: str) -> bool:
    return media_type.split(";")[0].strip() in (OCI_INDEX, DOCKER_LIST)


def manifest_media_type(content_type: str | None, body: Mapping[str, Any]) -> str:
    """The body's own mediaType when it names one, else the response's Content-Type."""
    declared, guess = body.get("mediaType"), OCI_INDEX if "manifests" in body else OCI_MANIFEST
    if isinstance(declared, str) and declared:
        return declared
    return (content_type or "").split(";")[0].strip() or guess


def _platform_entries(body: Mapping[str, Any]) -> Iterator[tuple[Platform, object]]:
    """(platform, digest as written) of each entry of a manifest list that names a platform."""
    for entry in _list(body, "manifests"):
        platform = entry.get("platform") if isinstance(entry, Mapping) else None
        found = config_platform(platform) if isinstance(platform, Mapping) else None
        if found is not None:  # attestation entries (unknown/unknown) skipped
            yield found, entry.get("digest")


def list_platforms(body: Mapping[str, Any]) -> list[Platform]:
    return list(dict.fromkeys(platform for platform, _ in _platform_entries(body)))


def config_platform(config: Mapping[str, Any]) -> Platform | None:
    """The platform an image config (or a list entry's `platform`) names."""
    os_name, arch = config.get("os"), config.get("architecture")
    if not isinstance(os_name, str) or not isinstance(arch, str) or "unknown" in (os_name, arch):
        return None
    variant = config.get("variant")
    return Platform(os_name, arch, variant if isinstance(variant, str) else "")


def _digest(value: object) -> str | None:
    """A sha256 digest, exactly: what a registry names goes into URLs and messages."""
    return value if isinstance(value, str) and re.fullmatch(r"sha256:[0-9a-f]{64}", value) else None


def list_entries(body: Mapping[str, Any]) -> list[tuple[Platform, str]]:
    """(platform, manifest digest) of each entry of a manifest list; attestations skipped."""
    return [(platform, d) for platform, raw in _platform_entries(body) if (d := _digest(raw))]


def config_digest(body: Mapping[str, Any]) -> str | None:
    """The config blob of a single-platform manifest: where its platform is written."""
    config = body.get("config")
    return _digest(config.get("digest")) if isinstance(config, Mapping) else None


def missing_platforms(wanted: Sequence[str], have: Iterable[Platform]) -> list[str]:
    """`arm64` matches any OS; `linux/arm64` and `linux/arm64/v8` match more narrowly."""
    have = list(have)
    parts = {w: tuple(w.strip().split("/"))[:3] for w in wanted}
    return [w for w in wanted if not any(parts[w] in (p[1:2], p[:2], tuple(p)) for p in have)]


def release_tags(tags: Iterable[str]) -> list[str]:
    """The YY.MM-py3 tags, newest first, each once (registries list them lexically)."""
    return sorted({tag for tag in tags if is_tag(tag)}, key=tag_key, reverse=True)


def nearest_tags(tag: str, existing: Iterable[str], count: int = 3) -> list[str]:
    """The existing YY.MM-py3 tags closest in time to `tag`, newest first."""
    candidates = release_tags(existing)
    if not is_tag(tag) or not candidates:
        return candidates[:count]
    months = {t: tag_key(t)[0] * 12 + tag_key(t)[1] for t in [tag, *candidates]}
    closest = sorted(candidates, key=lambda t: (abs(months[t] - months[tag]), -months[t]))
    return release_tags(closest[:count])


def tags_page(body: Mapping[str, Any]) -> list[str]:
    """The `tags` of one tags/list page (null when a repository has none)."""
    return [tag for tag in _list(body, "tags") if isinstance(tag, str)]


def _list(body: Mapping[str, Any], key: str) -> list[Any]:
    value = body.get(key)
    return value if isinstance(value, list) else []
