"""The registry keys: `registry`, `offline` (a boolean, in files and UVDOCK_OFFLINE), timeouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from uvdock.config import settings as config
from uvdock.errors import InputRefused


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", True),
        ("true", True),
        ("Yes", True),
        ("on", True),
        ("0", False),
        ("off", False),
        ("", False),
    ],
)
def test_offline_from_the_environment(text: str, expected: bool) -> None:
    assert config.load_layers(None, {"UVDOCK_OFFLINE": text}).config.offline is expected


def test_offline_must_be_a_boolean(tmp_path: Path) -> None:
    with pytest.raises(InputRefused, match="`offline` must be true or false, got 'maybe'"):
        config.load_layers(None, {"UVDOCK_OFFLINE": "maybe"})
    (tmp_path / "uvdock.toml").write_text('offline = "yes"\n')
    with pytest.raises(InputRefused, match=r"uvdock\.toml: `offline` must be true or false"):
        config.load_layers(tmp_path)


def test_registry_keys_from_a_file_and_the_environment(tmp_path: Path) -> None:
    (tmp_path / "uvdock.toml").write_text(
        'registry = "https://mirror.example"\noffline = true\nregistry-timeout = 10\n'
    )
    loaded = config.load_layers(tmp_path, {"UVDOCK_REGISTRY_CONNECT_TIMEOUT": "2"}).config
    assert (loaded.registry, loaded.offline) == ("https://mirror.example", True)
    assert (loaded.registry_connect_timeout, loaded.registry_timeout) == (2, 10)
    assert loaded.registry_page_size == 0
    defaults = config.load_layers(None, {}).config
    assert (defaults.registry, defaults.offline, defaults.registry_timeout) == ("", False, 30)
    assert {"registry", "offline", "registry-timeout"} <= set(config.FIELDS)
