"""Remove credentials from anything uvdock prints, logs or shows as a --dry-run command."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

# user:password@ or token@ inside a URL authority (https://, ssh://, git+https://, ...). The
# userinfo runs to the LAST @ before the path, so a password holding an unencoded @ is masked
# whole, and an empty user name (https://:token@host) still counts.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/\s]*)@")
# KEY=value where KEY looks like it holds a secret (GH_TOKEN=..., --build-arg PASSWORD=...).
_SECRET_ASSIGNMENT = re.compile(
    r"(?P<key>\b[A-Za-z_][A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|CREDENTIALS?|AUTH)[A-Za-z0-9_]*)=(?P<value>[^\s'\"]+)",
    re.IGNORECASE,
)
# Well-known token shapes that may appear bare in logs.
_TOKEN_SHAPES = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|nvapi-[A-Za-z0-9_-]{20,})"
)
_SECRET_ENV_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|CREDENTIAL|AUTH)", re.IGNORECASE
)
MASK = "***"
_MIN_SECRET_LENGTH = 4


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of token-like environment variables, longest first (so overlaps mask fully)."""
    source = os.environ if env is None else env
    values = {
        value
        for name, value in source.items()
        if _SECRET_ENV_NAME.search(name) and len(value) >= _MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """Mask URL credentials, KEY=secret assignments, token shapes and secret env values."""
    if not text:
        return text
    for value in secret_values(env):
        text = text.replace(value, MASK)
    text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _SECRET_ASSIGNMENT.sub(lambda m: f"{m['key']}={MASK}", text)
    return _TOKEN_SHAPES.sub(MASK, text)


def strip_credentials(url: str) -> str:
    """A remote URL without its user:password@ part (for display and host extraction)."""
    return _URL_USERINFO.sub(lambda m: m["scheme"], url)
