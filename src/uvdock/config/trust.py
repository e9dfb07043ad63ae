"""Which configuration a repository may set on its own, and the user's record of trust.

A cloned repository's configuration is text from strangers: its GATED_KEYS count only once
the user trusted that exact table with `uvdock trust` (as direnv and mise do). The record
(`$XDG_CONFIG_HOME/uvdock/trusted`, a JSON object a line) keeps the sha256 of the table,
not of the file: pyproject.toml changes with every `uv add`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from uvdock.config.settings import config_home, user_config_file
from uvdock.errors import EnvironmentUnusable

# Keys that change where code runs (a present venv makes `auto` run uv and the build
# backend on this machine), what the container can reach (engine-args, the cache mount)
# or where a host file is written (enroot-output). Not `image`: it runs in the container,
# which already runs the repository's own code; only these keys widen the container.
GATED_KEYS = ("engine", "engine-args", "container", "venv", "uv-cache", "container-uv-cache",
              "enroot-output")  # fmt: skip


class TrustRecord(NamedTuple):
    repo: str  # real path of the repository
    source: str  # "uvdock.toml" or "pyproject.toml [tool.uvdock]"
    sha256: str


def trust_file(env: Mapping[str, str]) -> Path:
    return config_home(env) / "trusted"


def gated(table: Mapping[str, Any]) -> dict[str, Any]:
    """The gated keys a configuration table sets (dash or underscore spelling), in order."""
    keys = ((raw.replace("_", "-"), value) for raw, value in table.items())
    return {key: value for key, value in keys if key in GATED_KEYS}


def digest(table: Mapping[str, Any]) -> str:
    import hashlib
    import json

    text = json.dumps(table, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def read_records(env: Mapping[str, str], *, strict: bool = False) -> list[TrustRecord]:
    """Every record in the user's trust file; a line that is not one is skipped unless `strict`."""
    import json

    path = trust_file(env)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        if not strict or isinstance(exc, FileNotFoundError):
            return []
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise EnvironmentUnusable(
            f"{path}: cannot read the trust record: {reason}; nothing was changed",
            hint="fix its permissions or content, or remove it (then trust again)",
        ) from None
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            data = json.loads(line)
            records.append(TrustRecord(*(str(data[field]) for field in TrustRecord._fields)))
        except (ValueError, KeyError, TypeError):
            if strict:
                raise EnvironmentUnusable(
                    f"{path}: line {number} is not a trust record; nothing was changed",
                    hint="fix or remove that line (or the file, then trust again)",
                ) from None
    return records


def read_records_to_rewrite(env: Mapping[str, str]) -> list[TrustRecord]:
    """Every record, for a command that rewrites the file: never replace what it cannot read."""
    return read_records(env, strict=True)


def render_records(records: list[TrustRecord]) -> str:
    import json

    return "".join(json.dumps(record._asdict(), ensure_ascii=True) + "\n" for record in records)


def find(records: list[TrustRecord], repo: Path, source: str) -> TrustRecord | None:
    return next((r for r in records if r.repo == str(repo) and r.source == source), None)


def without(records: list[TrustRecord], repo: Path) -> list[TrustRecord]:
    return [r for r in records if r.repo != str(repo)]


def untrusted(
    origins: Mapping[str, str],
    table: Mapping[str, Any],
    source: str,
    repo: Path,
    env: Mapping[str, str],
) -> dict[str, Any]:
    """The gated keys whose value in effect comes from an untrusted repository table."""
    keys = {
        key: value
        for key, value in gated(table).items()
        if source and origins.get(key.replace("-", "_")) == source
    }
    record = find(read_records(env), repo, source) if keys else None
    return {} if record and record.sha256 == digest(table) else keys


def refusal(
    keys: Mapping[str, Any], source: str, repo: Path, env: Mapping[str, str]
) -> tuple[str, str]:
    """The message and hint of the exit-2 refusal for `untrusted` keys."""
    settings = ", ".join(f"{key} = {value!r}" for key, value in keys.items())
    file = source.split(" ", 1)[0]
    known = find(read_records(env), repo, source)
    state = "has changed since you trusted it" if known else "is not trusted"
    first = next(iter(keys))
    message = (
        f"{settings} (from {repo / file}{source[len(file) :]}) would change where code runs or "
        f"what the container can reach, and this repository configuration {state}; "
        "nothing was run"
    )
    hint = (
        f"review {file}, then run `uvdock trust`; or choose {first} yourself "
        f"(UVDOCK_{first.replace('-', '_').upper()}, your {user_config_file(env)}"
        + (", --engine" if first == "engine" else "")
        + ")"
    )
    return message, hint
