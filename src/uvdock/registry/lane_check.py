"""What uvdock asks the registry of a lane's base image, and how the answers become refusals:
the client built from the configuration (`registry`, timeouts, the user's auth file), a tag
that does not exist (exit 2, with the nearest tags), a tag missing a lane platform (exit 2,
naming what it has), the newest tag published for every platform. Transport failures are
exit 3 from the client itself."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.registry import oci
from uvdock.registry.auth import find_credentials
from uvdock.registry.client import RegistryClient
from uvdock.registry.tags import REPOSITORY

if TYPE_CHECKING:
    from uvdock.config.settings import Config

OFFLINE_HINT = "pass --offline (or set offline = true) to bump without asking the registry"
NAMED_TAG_OFFLINE_HINT = "name the TAG and pass --offline to bump without asking the registry"
MAX_PROBES = 12  # --latest: tags tried, newest first, before giving up


class TagReport(NamedTuple):
    """What the registry said about the tag a bump writes (JSON `registry`)."""

    checked: bool
    url: str
    platforms: tuple[str, ...] = ()
    skipped: str = ""  # why it was not checked

    def to_json(self) -> dict[str, Any]:
        extra = {"platforms": list(self.platforms)} if self.checked else {"skipped": self.skipped}
        return {"checked": self.checked, "url": self.url, **extra}


def offline_reason(config: Config, flag: bool = False) -> str:
    """'' when the registry may be asked; else which setting turned it off."""
    if flag:
        return "--offline"
    return "offline = true in the configuration or UVDOCK_OFFLINE" if config.offline else ""


def require_online(config: Config, asks: str, hint: str, flag: bool = False) -> None:
    if offline := offline_reason(config, flag):
        raise InputRefused(f"{asks}, but offline mode is on ({offline})", hint=hint)


def registry_base(config: Config, image: str = REPOSITORY) -> tuple[str, str, str]:
    """(base URL, host the auth file is keyed by, repository) of a lane image's registry
    (config `registry` is a mirror of every lane's)."""
    host, repository = oci.split_image(image)
    if config.registry:
        base = oci.registry_url(config.registry, "config `registry` (UVDOCK_REGISTRY)")
        return base, urlsplit(base).netloc, repository
    return "https://" + ("registry-1.docker.io" if host == "docker.io" else host), host, repository


def client_for(
    config: Config,
    env: Mapping[str, str],
    log: Callable[[str], None],
    *,
    hint: str | None,
    image: str = REPOSITORY,
) -> RegistryClient:
    for key, value in (
        ("registry-connect-timeout", config.registry_connect_timeout),
        ("registry-timeout", config.registry_timeout),
    ):
        if value <= 0:
            raise InputRefused(f"config `{key}` must be a positive number of seconds, got {value}")
    base, auth_host, repository = registry_base(config, image)
    return RegistryClient(
        base,
        repository,
        credentials=find_credentials(auth_host, repository, env),
        connect_timeout=config.registry_connect_timeout,
        total_timeout=config.registry_timeout,
        page_size=max(0, config.registry_page_size),
        log=log,
        hint=hint,
        env=env,
    )


def _published(
    client: RegistryClient, tag: str, platforms: tuple[str, ...]
) -> tuple[TagReport, list[str]] | None:
    """(what `tag` is published for, the lane platforms it lacks); None: no such tag."""
    if (manifest := client.manifest(tag)) is None:
        return None
    if oci.is_list(manifest.media_type):
        have = oci.list_platforms(manifest.body)
    else:
        digest = oci.config_digest(manifest.body)
        found = oci.config_platform(client.blob_json(digest)) if digest is not None else None
        have = [found] if found is not None else []
    report = TagReport(True, client.base_url, tuple(map(str, have)))
    return report, oci.missing_platforms(platforms, have)


def _nearest_hint(client: RegistryClient, tag: str) -> str:
    try:
        nearest = oci.nearest_tags(tag, client.tags())
    except EnvironmentUnusable:
        return "the registry's tag list could not be read for a suggestion"
    if not nearest:
        return "the registry lists no YY.MM-py3 tags"
    return "nearest existing tags: " + ", ".join(nearest)


def require_tag(
    client: RegistryClient, tag: str, platforms: tuple[str, ...], image: str = REPOSITORY
) -> TagReport:
    """Refuse (exit 2) a tag the registry does not have, or has without a lane platform."""
    if (found := _published(client, tag, platforms)) is None:
        raise InputRefused(
            f"{image}:{tag} does not exist in the registry ({client.base_url})",
            hint=_nearest_hint(client, tag),
        )
    report, missing = found
    if missing:
        raise InputRefused(
            f"{image}:{tag} is not published for {', '.join(missing)}: "
            f"it has {', '.join(report.platforms) or 'no platform the registry names'}",
            hint=f"the lane needs every platform in config `platforms` ({', '.join(platforms)})",
        )
    return report


def newest_complete_tag(
    client: RegistryClient,
    platforms: tuple[str, ...],
    log: Callable[[str], None],
    order: Callable[[list[str]], list[str]],
) -> tuple[str, TagReport]:
    """The newest tag of the lane's family (`order`: newest first) published for every
    platform (exit 3 when none is)."""
    if not (candidates := order(client.tags())):
        raise EnvironmentUnusable(
            f"the registry ({client.base_url}) lists no YY.MM-py3 tags",
            hint="check config `registry`; or name a tag: uvdock image bump TAG --offline",
        )
    for tag in candidates[:MAX_PROBES]:
        found = _published(client, tag, platforms)
        if found is not None and not found[1]:
            return tag, found[0]
        if found is not None:  # else listed but gone: registries list tags lazily
            log(f"{tag}: skipped, not published for {', '.join(found[1])}")
    raise EnvironmentUnusable(
        f"none of the registry's newest {min(len(candidates), MAX_PROBES)} YY.MM-py3 tags "
        f"is published for every platform ({', '.join(platforms)})",
        hint="name a tag explicitly: uvdock image bump TAG",
    )
