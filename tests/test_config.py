from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli

from uvdock import config
from uvdock.errors import InputRefused


def test_defaults_fit_megatron(tmp_path: Path) -> None:
    cfg = config.load(tmp_path, env={})
    assert (cfg.workdir, cfg.venv, cfg.image, cfg.base_ref) == (
        "/workspace",
        "/opt/venv",
        "megatron-lm:local",
        "origin/main",
    )
    assert cfg.container_uv_cache == "/root/.cache/uv"
    assert cfg.dockerfile == "docker/Dockerfile.ci.dev"


def test_pyproject_table_then_env(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.uvdock]\nimage = "x:1"\nengine-args = ["--network", "host"]\n'
    )
    cfg = config.load(tmp_path, env={"UVDOCK_IMAGE": "y:2"})
    assert cfg.image == "y:2"
    assert cfg.engine_args == ("--network", "host")


def test_uvdock_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.uvdock]\nimage = "x:1"\nworkdir = "/w"\n')
    (tmp_path / "uvdock.toml").write_text('image = "z:3"\n')
    cfg = config.load(tmp_path, env={})
    assert cfg.image == "z:3"
    assert cfg.workdir == "/workspace"


def test_env_lists_and_ints(tmp_path: Path) -> None:
    cfg = config.load(
        tmp_path, env={"UVDOCK_ENGINE_ARGS": "--network host", "UVDOCK_SLURM_NODES": "2"}
    )
    assert cfg.engine_args == ("--network", "host")
    assert cfg.slurm_nodes == 2


@pytest.mark.parametrize(
    ("text", "env", "fragment"),
    [
        ("[tool.uvdock]\nimagee = 'x'\n", {}, "unknown key `imagee`"),
        ("[tool.uvdock]\nengine-args = '--x'\n", {}, "list of strings"),
        ("[tool.uvdock]\nengine = 'lxc'\n", {}, "engine must be one of"),
        ("", {"UVDOCK_IMAGES": "x"}, "unknown variable `UVDOCK_IMAGES`"),
        ("", {"UVDOCK_SLURM_NODES": "many"}, "must be an integer"),
    ],
)
def test_bad_configuration_is_refused(
    tmp_path: Path, text: str, env: dict[str, str], fragment: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(InputRefused, match=fragment) as info:
        config.load(tmp_path, env=env)
    assert info.value.exit_code == 2


def test_unknown_key_lists_valid_keys_on_the_cli(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(
        {"uvdock.toml": "contianer = 'x'\n", "pyproject.toml": "[project]\nname='d'\nversion='0'\n"}
    )
    result = run_cli("--repo", repo, "--dry-run", "lock")
    assert result.code == 2
    assert "unknown key `contianer`" in result.err and "container" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "~/.cache/uv"),
        ({"UV_CACHE_DIR": "/big/uv"}, "/big/uv"),
        ({"UV_CACHE_DIR": ""}, "~/.cache/uv"),
        ({"UV_CACHE_DIR": "/big/uv", "UVDOCK_UV_CACHE": "/mine"}, "/mine"),
    ],
)
def test_uv_cache_default(tmp_path: Path, env: dict[str, str], expected: str) -> None:
    expected = str(Path(expected).expanduser())  # HOME is set per test
    assert config.load(tmp_path, env=env).uv_cache == expected
    if "UVDOCK_UV_CACHE" not in env:
        assert config.default_uv_cache(env) == expected
