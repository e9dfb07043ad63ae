"""What an image tag holds, read from the registry: each platform's manifest digest and the
environment its image configuration sets (where NGC writes its component versions).

The manifest list (or a single manifest) names one manifest per platform; each platform's
manifest names its config blob; the config's `config.Env` is a list of `KEY=VALUE`. Uses the
RegistryClient of the tag check (same auth, same time budget). A platform whose manifest or
config cannot be read raises EnvironmentUnusable (exit 3) when `keep_going` is off; with it
on, the platform is kept with the reason, so that a pull request body can say what was not
read instead of blocking the bump.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from uvdock.errors import EnvironmentUnusable
from uvdock.registry import oci

if TYPE_CHECKING:
    from uvdock.registry.client import Manifest, RegistryClient


class PlatformImage(NamedTuple):
    platform: str  # linux/amd64; "" when a single manifest's config could not be read
    digest: str  # the platform manifest's digest
    env: dict[str, str] | None = None  # None: not read (digests only, or a problem)
    problem: str = ""  # why env could not be read

    def to_json(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "digest": self.digest,
            "env": self.env,
            "problem": self.problem or None,
        }


class TagImage(NamedTuple):
    tag: str
    digest: str  # what the tag points at: the list's digest, or the single manifest's
    platforms: tuple[PlatformImage, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "tag": self.tag,
            "digest": self.digest,
            "platforms": [p.to_json() for p in self.platforms],
        }


def environment(config: Mapping[str, Any]) -> dict[str, str]:
    """`config.Env` of an image configuration as a mapping (later entries win, as docker does)."""
    inner = config.get("config")
    entries = inner.get("Env") if isinstance(inner, Mapping) else None
    env: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, str) and "=" in entry:
            key, _, value = entry.partition("=")
            env[key] = value
    return env


def _config_of(client: RegistryClient, manifest_body: Mapping[str, Any], what: str) -> Any:
    digest = oci.config_digest(manifest_body)
    if digest is None:
        raise EnvironmentUnusable(f"registry: the manifest of {what} names no config blob")
    return client.blob_json(digest)


def _platform(client: RegistryClient, platform: str, digest: str, what: str) -> PlatformImage:
    manifest = client.manifest(digest)
    if manifest is None:
        raise EnvironmentUnusable(f"registry: the manifest {digest} of {what} is missing")
    config = _config_of(client, manifest.body, what)
    return PlatformImage(platform, digest, environment(config))


def _guarded(
    client: RegistryClient, platform: str, digest: str, what: str, keep_going: bool
) -> PlatformImage:
    try:
        return _platform(client, platform, digest, what)
    except EnvironmentUnusable as exc:
        if not keep_going:
            raise
        return PlatformImage(platform, digest, None, exc.message)


def read_tag(
    client: RegistryClient, tag: str, *, configs: bool = True, keep_going: bool = False
) -> TagImage | None:
    """The tag's platforms with their digests (and, with `configs`, their environment).

    None when the registry has no such tag. The tag's own manifest must be readable whatever
    `keep_going` says: without it nothing about the image is known.
    """
    manifest = client.manifest(tag)
    if manifest is None:
        return None
    if oci.is_list(manifest.media_type):
        platforms = []
        for platform, digest in oci.list_entries(manifest.body):
            what = f"{tag} ({platform})"
            if configs:
                platforms.append(_guarded(client, str(platform), digest, what, keep_going))
            else:
                platforms.append(PlatformImage(str(platform), digest))
        return TagImage(tag, manifest.digest, tuple(platforms))
    # Digests only: the platform is a label, not worth failing for.
    single = _single(client, tag, manifest, keep_going or not configs)
    return TagImage(tag, manifest.digest, (single if configs else single._replace(env=None),))


def _single(
    client: RegistryClient, tag: str, manifest: Manifest, keep_going: bool
) -> PlatformImage:
    """A tag that is one manifest: its config says both the platform and the environment."""
    try:
        config = _config_of(client, manifest.body, tag)
    except EnvironmentUnusable as exc:
        if not keep_going:
            raise
        return PlatformImage("", manifest.digest, None, exc.message)
    found = oci.config_platform(config)
    return PlatformImage(str(found) if found else "", manifest.digest, environment(config))
