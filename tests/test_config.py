from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli

from uvdock.config import settings as config
from uvdock.errors import InputRefused


def test_defaults_fit_megatron(tmp_path: Path) -> None:
    cfg = config.load_layers(tmp_path, env={}).config
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
    cfg = config.load_layers(tmp_path, env={"UVDOCK_IMAGE": "y:2"}).config
    assert cfg.image == "y:2"
    assert cfg.engine_args == ("--network", "host")


def test_uvdock_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.uvdock]\nimage = "x:1"\nworkdir = "/w"\n')
    (tmp_path / "uvdock.toml").write_text('image = "z:3"\n')
    cfg = config.load_layers(tmp_path, env={}).config
    assert cfg.image == "z:3"
    assert cfg.workdir == "/workspace"


def test_env_lists_and_ints(tmp_path: Path) -> None:
    cfg = config.load_layers(
        tmp_path, env={"UVDOCK_ENGINE_ARGS": "--network host", "UVDOCK_SLURM_NODES": "2"}
    ).config
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
        config.load_layers(tmp_path, env=env)
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
    assert config.load_layers(tmp_path, env=env).config.uv_cache == expected
    if "UVDOCK_UV_CACHE" not in env:
        assert config.default_uv_cache(env) == expected


@pytest.mark.parametrize(
    ("files", "env", "fragment"),
    [
        ({"uvdock.toml": b"image = '\xff\xfe'\n"}, {}, "uvdock.toml: not valid TOML"),
        ({"pyproject.toml": b"tool = 1  # uvdock\n"}, {}, "`tool` must be a table"),
        ({"pyproject.toml": b"[tool]\nuvdock = 3\n"}, {}, r"\[tool.uvdock\] must be a table"),
        ({}, {"UVDOCK_ENGINE_ARGS": "--network 'host"}, "UVDOCK_ENGINE_ARGS: No closing"),
        ({}, {"UVDOCK_PLATFORMS": '["amd64"'}, "must be a list of strings"),
        ({}, {"UVDOCK_LOCK_TIMEOUT": "soon"}, "must be an integer"),
    ],
)
def test_bad_configuration_is_exit_2(
    tmp_path: Path, files: dict[str, bytes], env: dict[str, str], fragment: str
) -> None:
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    with pytest.raises(InputRefused, match=fragment):
        config.load_layers(tmp_path, env=env)


def test_a_broken_user_config_file_is_named_by_its_full_path(tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "uvdock" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("engine = \n")
    with pytest.raises(InputRefused, match=f"^{user}: not valid TOML"):
        config.load_layers(tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})


@pytest.mark.parametrize(
    "key",
    [
        "dev-pin-file",
        "lts-pin-file",
        "dockerfile",
        "lts-dockerfile",
        "gitlab-build-file",
        "lts-requirements",
        "recipes-dir",
    ],
)
@pytest.mark.parametrize("value", ["/etc/passwd", "../outside/x", "docker/../../x", "linked/x"])
def test_repository_paths_stay_inside_the_repository(tmp_path: Path, key: str, value: str) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (repo / "linked").symlink_to(outside, target_is_directory=True)
    (repo / "uvdock.toml").write_text(f"{key} = {value!r}\n")
    with pytest.raises(InputRefused, match=f"`{key}`.*must be a path inside the repository"):
        config.load_layers(repo, env={})
    env_name = "UVDOCK_" + key.upper().replace("-", "_")
    (repo / "uvdock.toml").unlink()
    with pytest.raises(InputRefused, match=f"`{key}`"):
        config.load_layers(repo, env={env_name: value})


def test_an_empty_path_means_the_repository_has_none(tmp_path: Path) -> None:
    # `lts-pin-file = ""` is how a repository says it has no LTS lane (image check).
    (tmp_path / "uvdock.toml").write_text('lts-pin-file = ""\n')
    assert config.load_layers(tmp_path, env={}).config.lts_pin_file == ""


def test_paths_inside_through_an_inner_symlink_are_fine(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "docker").symlink_to("real", target_is_directory=True)
    (tmp_path / "uvdock.toml").write_text("dev-pin-file = 'docker/./.ngc_version.dev'\n")
    assert config.load_layers(tmp_path, env={}).config.dev_pin_file == "docker/./.ngc_version.dev"


def test_lock_timeout_is_configurable(tmp_path: Path) -> None:
    assert config.load_layers(tmp_path, env={}).config.lock_timeout == 10
    (tmp_path / "uvdock.toml").write_text("lock-timeout = 2\n")
    assert config.load_layers(tmp_path, env={}).config.lock_timeout == 2
