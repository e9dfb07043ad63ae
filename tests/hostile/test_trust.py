"""A cloned repository's own configuration cannot widen what runs on the host (issue 20, item 2).

Real git repositories with committed hostile `uvdock.toml` / `[tool.uvdock]`; a fake `uv`
on PATH only tells whether anything ran. Trust is recorded in a per-test XDG config folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, git

PYPROJECT = '[project]\nname = "demo"\nversion = "0.1"\nrequires-python = ">=3.11"\n'

HOSTILE = {
    "engine local": 'engine = "local"\n',
    "engine-args root fs": 'engine-args = ["-v", "/:/host", "--privileged"]\n',
    "uv-cache root": 'uv-cache = "/"\n',
    "container-uv-cache": 'container-uv-cache = "/usr/local/bin"\n',
    "enroot-output outside": 'enroot-output = "/tmp/elsewhere.sqsh"\n',
    "container": 'container = "someone-elses-dev"\n',
    "venv": 'venv = "/usr"\n',
}


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder / "uvdock"


@pytest.fixture
def fake_uv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `uv` first on PATH that leaves a mark when it runs."""
    folder = tmp_path / "fakebin"
    folder.mkdir()
    mark = tmp_path / "uv-ran"
    uv = folder / "uv"
    uv.write_text(
        f'#!/bin/sh\necho "$@" >> {mark}\n[ "$1" = --version ] && echo "uv 0.13.9"\nexit 0\n'
    )
    uv.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return mark


def _repo(make_repo: Callable[..., Path], config: str, *, in_pyproject: bool = False) -> Path:
    if in_pyproject:
        return make_repo({"pyproject.toml": PYPROJECT + "\n[tool.uvdock]\n" + config})
    return make_repo({"pyproject.toml": PYPROJECT, "uvdock.toml": config})


@pytest.mark.parametrize("in_pyproject", [False, True], ids=["uvdock.toml", "pyproject"])
@pytest.mark.parametrize("case", list(HOSTILE))
def test_an_untrusted_repository_key_is_refused_and_nothing_runs(
    case: str,
    in_pyproject: bool,
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    user_config: Path,
    fake_uv: Path,
) -> None:
    repo = _repo(make_repo, HOSTILE[case], in_pyproject=in_pyproject)
    result = run_cli("--repo", repo, "lock")
    assert result.code == 2, result.err
    key = HOSTILE[case].split(" ", 1)[0]
    assert f"{key} = " in result.err and "uvdock trust" in result.err
    assert ("uvdock.toml" if not in_pyproject else "pyproject.toml [tool.uvdock]") in result.err
    assert "nothing was run" in result.err
    assert not fake_uv.exists()
    assert git(repo, "status", "--porcelain") == ""


def test_trust_then_a_change_needs_trust_again_and_revoke_forgets(
    make_repo: Callable[..., Path], run_cli: RunCli, user_config: Path, fake_uv: Path
) -> None:
    repo = _repo(make_repo, HOSTILE["engine local"])
    shown = run_cli("--repo", repo, "trust", "--show")
    assert shown.code == 0 and "engine = 'local'" in shown.out and "not trusted" in shown.out
    assert not (user_config / "trusted").exists()
    dry = run_cli("--repo", repo, "--dry-run", "trust")
    assert dry.code == 0 and not (user_config / "trusted").exists()
    trusted = run_cli("--repo", repo, "trust")
    assert trusted.code == 0, trusted.err
    assert run_cli("--repo", repo, "lock").code == 0
    assert fake_uv.read_text().splitlines().count("lock") == 1  # it ran, as trusted
    (repo / "uvdock.toml").write_text('engine = "local"\nengine-args = ["--privileged"]\n')
    changed = run_cli("--repo", repo, "lock")
    assert changed.code == 2 and "has changed since you trusted it" in changed.err
    assert fake_uv.read_text().splitlines().count("lock") == 1
    assert run_cli("--repo", repo, "trust").code == 0
    assert run_cli("--repo", repo, "lock").code == 0
    assert run_cli("--repo", repo, "trust", "--revoke").code == 0
    assert run_cli("--repo", repo, "lock").code == 2
    document = json.loads(run_cli("--repo", repo, "--json", "trust", "--show").out)
    assert document["state"] == "not trusted" and document["keys"]["engine"] == "local"


def test_what_trust_records_does_not_depend_on_the_users_own_settings(
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    user_config: Path,
    fake_uv: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Review: `trust` judged the final setting, so UVDOCK_ENGINE=auto hid the repository's
    # engine = "local" ("nothing to trust", nothing recorded, refused on the next command),
    # and UVDOCK_VENV=/other made a repository's default venv look like a widening.
    repo = _repo(make_repo, HOSTILE["engine local"])
    monkeypatch.setenv("UVDOCK_ENGINE", "auto")
    trusted = run_cli("--repo", repo, "trust")
    assert trusted.code == 0 and "nothing to trust" not in trusted.out + trusted.err
    monkeypatch.delenv("UVDOCK_ENGINE")
    assert run_cli("--repo", repo, "lock").code == 0  # trusted: the repository's engine ran
    defaults = _repo(make_repo, 'venv = "/opt/venv"\n')
    monkeypatch.setenv("UVDOCK_VENV", "/other")
    document = json.loads(run_cli("--repo", defaults, "--json", "trust", "--show").out)
    assert document["state"] == "nothing to trust" and not document["keys"], document


def test_trust_is_per_repository_path(
    make_repo: Callable[..., Path], run_cli: RunCli, user_config: Path, fake_uv: Path
) -> None:
    first = _repo(make_repo, HOSTILE["engine local"])
    second = _repo(make_repo, HOSTILE["engine local"])  # the same bytes, another clone
    assert run_cli("--repo", first, "trust").code == 0
    assert run_cli("--repo", first, "lock").code == 0
    assert run_cli("--repo", second, "lock").code == 2


def test_the_users_own_flags_environment_and_config_are_always_taken(
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    user_config: Path,
    fake_uv: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    repo = _repo(make_repo, HOSTILE["engine local"])
    assert run_cli("--repo", repo, "--engine", "local", "lock").code == 0
    monkeypatch.setenv("UVDOCK_ENGINE", "local")
    assert run_cli("--repo", repo, "lock").code == 0
    monkeypatch.delenv("UVDOCK_ENGINE")
    defaults = _repo(make_repo, 'engine = "auto"\nvenv = "/opt/venv"\n')  # widens nothing
    assert run_cli("--repo", defaults, "--dry-run", "--image", "x:1", "lock").code == 0
    plain = make_repo({"pyproject.toml": PYPROJECT})
    user_config.mkdir(parents=True)
    (user_config / "config.toml").write_text('engine-args = ["--network", "host"]\n')
    dry = run_cli("--repo", plain, "--dry-run", "--engine", "podman", "--image", "x:1", "lock")
    assert dry.code == 0, dry.err
    assert "--network host" in dry.out


def test_messages_name_the_file_not_a_flag_the_user_never_gave(
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    user_config: Path,
    fake_uv: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = _repo(make_repo, HOSTILE["engine local"])
    assert run_cli("--repo", repo, "trust").code == 0
    result = run_cli("--repo", repo, "lock")
    assert result.code == 0, result.err
    assert "locally with the uv on PATH (engine = local, from uvdock.toml)" in result.out
    assert "--engine" not in result.out + result.err
    doctor = run_cli("--repo", repo, "doctor")
    assert "already inside the CI container" not in doctor.out
    assert "engine = local, from uvdock.toml" in doctor.out
    monkeypatch.setenv("UVDOCK_ENGINE", "podman")
    monkeypatch.setenv("PATH", str(fake_uv.parent / "fakebin"))  # no podman there
    podman = run_cli("--repo", repo, "lock")
    assert podman.code == 3 and "engine = podman, from UVDOCK_ENGINE" in podman.err
    assert "--engine" not in podman.err


def _which(program: str) -> str:
    import shutil

    found = shutil.which(program)
    assert found is not None
    return found


@pytest.mark.parametrize("source", ["flag-free env", "trusted repo"])
def test_a_cache_mount_of_the_root_filesystem_is_refused_from_any_source(
    source: str,
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    user_config: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if source == "trusted repo":
        repo = _repo(make_repo, 'uv-cache = "/"\n')
        assert run_cli("--repo", repo, "trust").code == 0
    else:
        repo = make_repo({"pyproject.toml": PYPROJECT})
        monkeypatch.setenv("UVDOCK_UV_CACHE", "/")
    result = run_cli("--repo", repo, "--dry-run", "--engine", "podman", "--image", "x:1", "lock")
    assert result.code == 2, result.out + result.err
    assert "mount / read-write" in result.err
    assert "-v /:" not in result.out


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand a folder to another user")
def test_a_cache_owned_by_another_user_is_refused(
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    user_config: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    cache = tmp_path / "their-cache"
    cache.mkdir()
    os.chown(cache, 54321, 54321)
    repo = make_repo({"pyproject.toml": PYPROJECT})
    monkeypatch.setenv("UVDOCK_UV_CACHE", str(cache))
    result = run_cli("--repo", repo, "--dry-run", "--engine", "podman", "--image", "x:1", "lock")
    assert result.code == 2 and "owned by uid 54321" in result.err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand a repository to another user")
@pytest.mark.parametrize(
    "command",
    [("merge-driver", "install"), ("image", "bump", "26.08-py3", "--offline")],
    ids=["merge-driver", "image-bump"],
)
def test_a_repository_owned_by_another_user_is_not_written_unless_safe_directory(
    command: tuple[str, ...], megatron_repo: Path, run_cli: RunCli, user_config: Path
) -> None:
    repo = megatron_repo
    for path in [repo, *repo.rglob("*")]:
        os.lchown(path, 54321, 54321)
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    result = run_cli("--repo", repo, *command)
    assert result.code == 3, result.out + result.err
    assert "safe.directory" in result.err and "uid 54321" in result.err
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before
    global_config = Path(os.environ["GIT_CONFIG_GLOBAL"])
    with global_config.open("a") as fh:
        fh.write(f"[safe]\n\tdirectory = {repo}\n")
    allowed = run_cli("--repo", repo, *command)
    assert allowed.code == 0, allowed.err


@pytest.mark.parametrize(
    "args",
    [
        ["-v", "/:/host"],
        ["--volume=/:/host:rw"],
        ["--mount", "type=bind,source=/,target=/host"],
        ["--mount=type=bind,src=/,dst=/host"],
    ],
)
def test_an_engine_args_mount_of_the_root_filesystem_is_refused_from_any_source(
    args: list[str],
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    user_config: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_repo({"pyproject.toml": PYPROJECT})
    monkeypatch.setenv("UVDOCK_ENGINE_ARGS", json.dumps(args))
    result = run_cli("--repo", repo, "--dry-run", "--engine", "podman", "--image", "x:1", "lock")
    assert result.code == 2, result.out + result.err
    assert "from UVDOCK_ENGINE_ARGS" in result.err and "mount / read-write" in result.err
    monkeypatch.setenv("UVDOCK_ENGINE_ARGS", json.dumps(["-v", "/:/host:ro"]))  # read-only
    assert (
        run_cli("--repo", repo, "--dry-run", "--engine", "podman", "--image", "x:1", "lock").code
        == 0
    )
