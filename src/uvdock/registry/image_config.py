"""What an image tag holds, read from the registry: each platform's manifest digest and the
environment its config sets (`config.Env`, where NGC writes its component versions). A
platform that cannot be read raises EnvironmentUnusable (exit 3), or with `keep_going` is kept
with the reason, so a pull request body says what was not read instead of blocking the bump.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from uvdock.errors import EnvironmentUnusable
from uvdock.registry import oci

if TYPE_CHECKING:
    from uvdock.registry.client import RegistryClient


class PlatformImage(NamedTuple):
    platform: str  # linux/amd64; "" when a single manifest's config could not be read
    digest: str  # the platform manifest's digest
    env: dict[str, str] | None = None  # None: not read (digests only, or a problem)
    problem: str = ""  # why env could not be read


class TagImage(NamedTuple):
    tag: str
    digest: str  # what the tag points at: the list's digest, or the single manifest's
    platforms: tuple[PlatformImage, ...]

    def to_json(self) -> dict[str, Any]:
        platforms = [{**p._asdict(), "problem": p.problem or None} for p in self.platforms]
        return {**self._asdict(), "platforms": platforms}


def environment(config: Mapping[str, Any]) -> dict[str, str]:
    """`config.Env` of an image configuration as a mapping (later entries win, as docker does)."""
    inner = config.get("config")
    entries = inner.get("Env") if isinstance(inner, Mapping) else None
    found = entries if isinstance(entries, list) else []
    return dict(entry.split("=", 1) for entry in found if isinstance(entry, str) and "=" in entry)


def read_tag(
    client: RegistryClient, tag: str, *, configs: bool = True, keep_going: bool = False
) -> TagImage | None:
    """The tag's platforms with their digests (and, with `configs`, their environment); None
    when the registry has no such tag. The tag's own manifest must be readable, whatever
    `keep_going` says: without it nothing about the image is known."""
    if (manifest := client.manifest(tag)) is None:
        return None

    def read(
        platform: str, digest: str, lenient: bool, body: Mapping[str, Any] | None = None
    ) -> PlatformImage:
        """`body`: the tag is this one manifest, whose config names the platform."""
        what = f"{tag} ({platform})" if platform else tag
        try:
            if body is None:
                if (found := client.manifest(digest)) is None:
                    raise EnvironmentUnusable(
                        f"registry: the manifest {digest} of {what} is missing"
                    )
                body = found.body
            if (config_digest := oci.config_digest(body)) is None:
                raise EnvironmentUnusable(f"registry: the manifest of {what} names no config blob")
            config = client.blob_json(config_digest)
        except EnvironmentUnusable as exc:
            if not lenient:
                raise
            return PlatformImage(platform, digest, None, exc.message)
        platform = platform or str(oci.config_platform(config) or "")
        return PlatformImage(platform, digest, environment(config))

    if not oci.is_list(manifest.media_type):  # digests only: the platform is a label
        one = read("", manifest.digest, keep_going or not configs, manifest.body)
        return TagImage(tag, manifest.digest, (one if configs else one._replace(env=None),))
    platforms = tuple(
        read(str(p), digest, keep_going) if configs else PlatformImage(str(p), digest)
        for p, digest in oci.list_entries(manifest.body)
    )
    return TagImage(tag, manifest.digest, platforms)
