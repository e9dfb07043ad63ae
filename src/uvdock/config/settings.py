"""Configuration: defaults that fit Megatron-LM, the user's file, the repository's, UVDOCK_*.

Later wins: defaults; `$XDG_CONFIG_HOME/uvdock/config.toml`; `[tool.uvdock]` in
pyproject.toml, or `uvdock.toml` when it exists; `UVDOCK_<KEY>`; options (`Config.replace`).
Keys that widen what runs on the host come from the repository only once trusted (trust.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from uvdock.cli.spec import ENGINE_CHOICES
from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.files import textlines

# The list in Megatron-LM's Dockerfile.ci.dev: the base image provides these.
DEFAULT_PROTECTED_PACKAGES = ("torch", "torchvision", "triton", "transformer-engine-cu12", *(
    f"nvidia-{name}-cu12" for name in ("cublas", "cuda-cupti", "cuda-nvrtc", "cuda-runtime",
    "cudnn", "cufft", "cufile", "curand", "cusolver", "cusparse", "cusparselt", "nccl")))  # fmt: skip


def default_uv_cache(env: Mapping[str, str]) -> str:
    return env.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv")


class Config(NamedTuple):
    """Frozen settings: a NamedTuple, as `dataclasses` imports `inspect` at every start-up."""

    # Where uv runs.
    engine: str = "auto"
    container: str = ""
    image: str = "megatron-lm:local"
    lts_image: str = "megatron-lm:local-lts"
    workdir: str = "/workspace"
    venv: str = "/opt/venv"
    uv_cache: str = default_uv_cache(os.environ)  # load() re-reads it from its env
    container_uv_cache: str = "/root/.cache/uv"
    engine_args: tuple[str, ...] = ()
    base_ref: str = "origin/main"
    # Image build and acquisition.
    dockerfile: str = "docker/Dockerfile.ci.dev"
    lts_dockerfile: str = "docker/Dockerfile.ci.lts"
    build_target: str = "main"
    gitlab_remote: str = "gitlab"
    registry_image: str = "adlr/megatron-lm/mcore_ci_dev:main"
    lts_registry_image: str = "adlr/megatron-lm/mcore_ci_lts:main"
    enroot_output: str = "megatron-lm.sqsh"
    slurm_nodes: int = 1
    slurm_gpus_per_node: int = 8
    # Base-image pins.
    dev_pin_file: str = "docker/.ngc_version.dev"
    lts_pin_file: str = "docker/.ngc_version.lts"
    gitlab_build_file: str = ".gitlab/stages/01.build.yml"
    # GitHub workflows whose `docker build -f <lane Dockerfile>` steps pin FROM_IMAGE_NAME.
    workflow_files: tuple[str, ...] = (".github/workflows/*.y*ml",)
    # Alternative sets of KEY=VALUE entries (image/pins.py match_sets; `KEY=`: no KEY) for
    # every layout Megatron-LM's matrix has had: dev rows without IMAGE_TYPE (2025), lts rows
    # from Dockerfile.ci.dev (early 2026), lts rows from Dockerfile.ci.lts (today).
    dev_matrix_match: tuple[str, ...] = ("FILE=Dockerfile.ci.dev, IMAGE_TYPE=dev",
                                         "FILE=Dockerfile.ci.dev, IMAGE_TYPE=")  # fmt: skip
    lts_matrix_match: tuple[str, ...] = ("FILE=Dockerfile.ci.lts, IMAGE_TYPE=",
                                         "FILE=Dockerfile.ci.lts, IMAGE_TYPE=lts",
                                         "FILE=Dockerfile.ci.dev, IMAGE_TYPE=lts")  # fmt: skip
    platforms: tuple[str, ...] = ("amd64", "arm64")
    # The registry that publishes the base image ("" = derived from its name: https://nvcr.io).
    registry: str = ""
    offline: bool = False  # never ask the registry; `image bump` says it did not check
    registry_connect_timeout: int = 5  # seconds
    registry_timeout: int = 30  # seconds, for all of one command's registry requests
    registry_page_size: int = 0  # tags per tags/list page (0: the registry's default)
    protected_packages: tuple[str, ...] = DEFAULT_PROTECTED_PACKAGES
    # `lock --upgrade --pr-body`: the pull request's title; {branch} and {date} are filled in.
    lock_bump_title: str = "chore: Bump `uv.lock` ({branch}) ({date})"
    lts_requirements: str = "docker/lts/requirements.txt"
    recipes_dir: str = "tests/test_utils/recipes"
    broken_suffix: str = "-broken"
    # Concurrent runs: how long a writing command waits for another run's repository lock.
    lock_timeout: int = 10  # seconds

    def replace(self, **changes: Any) -> Config:
        return self._replace(**changes)


# kebab-case key -> (attribute name, annotation as written)
FIELDS: dict[str, tuple[str, str]] = {
    # NamedTuple keeps postponed annotations as ForwardRefs; the text is what is compared.
    name.replace("_", "-"): (name, str(getattr(kind, "__forward_arg__", kind)))
    for name, kind in Config.__annotations__.items()
}


# Keys naming files or folders uvdock reads for editing or writes: inside the repository only.
REPO_PATH_KEYS = ("dev-pin-file", "lts-pin-file", "dockerfile", "lts-dockerfile",
                  "gitlab-build-file", "lts-requirements", "recipes-dir")  # fmt: skip


def _coerce(key: str, value: Any, origin: str) -> Any:
    kind = FIELDS[key][1].split("[")[0]
    strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
    what, fits = {
        "bool": ("true or false", isinstance(value, bool)),
        "int": ("an integer", isinstance(value, int) and not isinstance(value, bool)),
        "tuple": ("a list of strings", strings),
    }.get(kind, ("a string", isinstance(value, str)))
    if not fits:
        raise InputRefused(f"{origin}: `{key}` must be {what}, got {value!r}")
    if key == "engine" and value not in ENGINE_CHOICES:
        raise InputRefused(
            f"{origin}: engine must be one of {', '.join(ENGINE_CHOICES)}, got {value!r}"
        )
    return tuple(value) if kind == "tuple" else value


def table_values(table: Mapping[str, Any], origin: str) -> dict[str, Any]:
    """A configuration table's own values, checked, by field name (engine_args)."""
    values: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        if key not in FIELDS:
            raise InputRefused(
                f"{origin}: unknown key `{raw_key}`; valid keys: {', '.join(sorted(FIELDS))}"
            )
        values[FIELDS[key][0]] = _coerce(key, value, origin)
    return values


_ENV_BOOLS = {**dict.fromkeys(("1", "true", "yes", "on"), True),
              **dict.fromkeys(("0", "false", "no", "off", ""), False)}  # fmt: skip


def _env_value(key: str, text: str) -> Any:
    kind = FIELDS[key][1]
    if kind == "bool":
        return _ENV_BOOLS.get(text.strip().lower(), text)  # _coerce reports anything else
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            return text  # _coerce reports it
    if kind.startswith("tuple"):
        import json
        import shlex

        try:
            return json.loads(text) if text.strip().startswith("[") else shlex.split(text)
        except json.JSONDecodeError:
            return text
        except ValueError as exc:  # e.g. an unbalanced quote
            raise InputRefused(
                f"environment UVDOCK_{FIELDS[key][0].upper()}: {exc} in {text!r}",
                hint='give a JSON list (["a", "b"]) or words quoted as a shell would',
            ) from None
    return text


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    known = {"UVDOCK_" + name.upper(): key for key, (name, _) in FIELDS.items()}
    for name, text in env.items():
        if not name.startswith("UVDOCK_") or name in _ENV_NOT_CONFIG:
            continue
        if name not in known:
            raise InputRefused(
                f"environment: unknown variable `{name}`; valid: {', '.join(sorted(known))}"
            )
        key = known[name]
        values[FIELDS[key][0]] = _coerce(key, _env_value(key, text), f"environment {name}")
    return values


# Variables of uvdock's own that are not configuration keys.
_ENV_NOT_CONFIG = frozenset(f"UVDOCK_{name}" for name in (
    "REQUIRE_ENGINE", "TEST_IMAGE", "TEST_UV_VERSION", "REQUIRE_SLURM", "TEST_SQSH",
    "SLURM_SHARED", "TEST_ENROOT_DATA", "REQUIRE_SLURM_NODES", "TEST_MULTINODE"))  # fmt: skip


def _read_toml(path: Path, shown: str = "") -> dict[str, Any]:
    """`shown`: how errors name the file (the repository's files by name, the user's own
    by its full path, which the user may not know)."""
    import tomllib

    try:
        return tomllib.loads(textlines.read_text(path))
    except (ValueError, RecursionError) as exc:  # bad TOML or UTF-8, a 5000-digit integer
        raise InputRefused(f"{shown or path.name}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise EnvironmentUnusable(f"{path}: cannot read: {exc.strerror or exc}") from None


def file_table(repo: Path) -> tuple[dict[str, Any], str]:
    """The raw configuration table and where it came from ('' when there is none)."""
    own, pyproject = repo / "uvdock.toml", repo / "pyproject.toml"
    if own.exists():
        return _read_toml(own), "uvdock.toml"
    # Most runs have no [tool.uvdock]: a byte search spares parsing a large pyproject.
    if not (pyproject.exists() and b"uvdock" in textlines.read_bytes(pyproject)):
        return {}, ""
    try:
        tool = _read_toml(pyproject).get("tool", {})
    except InputRefused:
        return {}, ""  # a broken pyproject is the command's business, not config's
    if not isinstance(tool, dict):
        raise InputRefused(f"pyproject.toml: `tool` must be a table, got {tool!r}")
    table = tool.get("uvdock", {})
    if not isinstance(table, dict):
        raise InputRefused("pyproject.toml: [tool.uvdock] must be a table")
    return table, "pyproject.toml [tool.uvdock]"


class Layers(NamedTuple):
    config: Config
    origins: dict[str, str]  # attribute name -> the source that set it last (none: default)
    table: dict[str, Any]  # the repository's own configuration table
    source: str  # where that table is ("uvdock.toml", "pyproject.toml [tool.uvdock]", "")


def config_home(env: Mapping[str, str]) -> Path:
    """The user's configuration folder for uvdock (XDG base directory rules)."""
    base = env.get("XDG_CONFIG_HOME", "")
    if not base or not Path(base).is_absolute():  # the spec says: relative means unset
        base = str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "uvdock"


def user_config_file(env: Mapping[str, str]) -> Path:
    return config_home(env) / "config.toml"


def load_layers(repo: Path | None, env: Mapping[str, str] | None = None) -> Layers:
    env = os.environ if env is None else env
    values: dict[str, Any] = {"uv_cache": default_uv_cache(env)}
    origins: dict[str, str] = {}
    user_file = user_config_file(env)
    user = _read_toml(user_file, str(user_file)) if user_file.is_file() else {}
    user = table_values(user, str(user_file))
    table, source = file_table(repo) if repo is not None else ({}, "")
    for layer, origin in ((user, f"your {user_file}"), (table_values(table, source), source)):
        values.update(layer)
        origins.update(dict.fromkeys(layer, origin))
    from_env = _from_env(env)
    values.update(from_env)
    origins.update({name: f"UVDOCK_{name.upper()}" for name in from_env})
    loaded = Config(**values)
    # A configured path that is absolute or resolves outside the repository: exit 2.
    top = os.path.realpath(repo or ".")
    for key in REPO_PATH_KEYS if repo is not None else ():
        value = getattr(loaded, FIELDS[key][0])
        real = os.path.realpath(os.path.join(top, value))
        # An empty path says "this repository has none" (e.g. no LTS lane).
        bad = Path(value).is_absolute() or ".." in Path(value).parts
        if value and (bad or not Path(real).is_relative_to(top)):
            raise InputRefused(
                f"configuration `{key}` = {value!r}: must be a path inside the repository "
                f"({top}); it resolves to {real}",
                hint=f"set `{key}` to a path relative to the repository root",
            )
    return Layers(loaded, origins, table, source)
