"""`add` / `remove` never let uv sync behind the user's back, and `sync` refuses a throwaway
container; on a copy of Megatron-LM (its real extras, groups and protected packages).

The argv of every planned uv command, in every placement: uv add/remove with `--no-sync`;
then, where the environment outlives the command (exec, local), `uvdock sync`'s own
inexact, Dockerfile-selected sync with `--no-install-package` for what the image provides;
in a fresh container (run, srun) nothing more.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli

PLACEMENTS = {
    "exec": ("--engine", "podman", "--container", "ci"),
    "local": ("--engine", "local"),
    "run": ("--engine", "podman", "--image", "megatron-lm:local"),
    "srun": ("--engine", "srun", "--image", "megatron-lm:local"),
}
PROTECTED = {"torch", "torchvision", "triton", "transformer-engine-cu12", "nvidia-nccl-cu12"}


def _uv_commands(out: str) -> list[list[str]]:
    """The uv part of each command a --json --dry-run plans."""
    planned = json.loads(out)["planned"]
    argvs = [[str(word) for word in step["argv"]] for step in planned]
    return [argv[argv.index("uv") :] for argv in argvs if "uv" in argv]


def _protected(uv: list[str]) -> set[str]:
    return {uv[i + 1] for i, word in enumerate(uv) if word == "--no-install-package"}


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
@pytest.mark.parametrize("action", ["add", "remove"])
def test_planned_uv_commands_in_every_placement(
    placement: str, action: str, megatron_repo: Path, run_cli: RunCli
) -> None:
    where = PLACEMENTS[placement]
    result = run_cli("--repo", megatron_repo, "--json", "--dry-run", *where, action, "einops")
    assert result.code == 0, result.err
    commands = _uv_commands(result.out)
    assert commands[0] == ["uv", action, "--no-sync", "einops"]
    if placement in ("run", "srun"):
        assert len(commands) == 1, commands
        assert "not syncing" in result.out + result.err
        return
    assert len(commands) == 2, commands
    sync = commands[1]
    assert sync[:4] == ["uv", "sync", "--locked", "--inexact"] and "--exact" not in sync
    # Dockerfile.ci.dev's own selection, then the dev profile's test group.
    assert sync[4:16] == [
        *("--extra", "dev", "--extra", "mlm", "--extra", "ssm", "--extra", "te"),
        *("--group", "no_pypi_wheels", "--group", "test"),
    ]
    assert _protected(sync) >= PROTECTED and len(_protected(sync)) == 16


def test_no_sync_skips_the_sync_in_a_running_container(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    result = run_cli(
        "--repo",
        megatron_repo,
        "--json",
        "--dry-run",
        *PLACEMENTS["exec"],
        "add",
        "--no-sync",
        "einops",
    )
    assert result.code == 0, result.err
    assert _uv_commands(result.out) == [["uv", "add", "--no-sync", "einops"]]
    assert "not syncing (--no-sync)" in result.out + result.err


def test_add_to_a_group_syncs_that_group_too(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli(
        "--repo",
        megatron_repo,
        "--json",
        "--dry-run",
        *PLACEMENTS["exec"],
        "add",
        "--group",
        "docs",
        "x",
    )
    assert result.code == 0, result.err
    sync = _uv_commands(result.out)[1]
    assert sync[sync.index("test") + 1 : sync.index("test") + 3] == ["--group", "docs"]


@pytest.mark.parametrize(
    "where", [PLACEMENTS["run"], ("--engine", "docker", "--image", "nvcr.io/x:1")]
)
def test_sync_into_a_throwaway_container_is_refused(
    where: tuple[str, ...], megatron_repo: Path, run_cli: RunCli
) -> None:
    for dry in (("--dry-run",), ()):
        result = run_cli("--repo", megatron_repo, *dry, *where, "sync", "--group", "docs")
        assert result.code == 2, result.out
        assert "removed when uv exits" in result.err
        assert "--container NAME" in result.err and "sleep infinity" in result.err
        assert "--container" in result.err and " sync --group docs`" in result.err
        assert "uvdock shell" not in result.err  # uvdock is not in the container
        assert result.out == ""


# -- item 8: a new group or extra ------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "table", "said"),
    [
        ("--group", "dependency-groups", "is a new dependency group"),
        ("--optional", "optional-dependencies", "is a new extra"),
    ],
)
def test_add_to_a_new_group_or_extra_creates_it(
    option: str,
    table: str,
    said: str,
    uv_project: Callable[..., Path],
    run_cli: RunCli,
) -> None:
    repo = uv_project(("alpha",), groups={"test": ["gamma"]})
    result = run_cli("--repo", repo, "--engine", "local", "add", option, "brand-new", "delta")
    assert result.code == 0, result.err
    assert f"`brand-new` {said}: uv will create it" in result.out + result.err
    data = tomllib.loads((repo / "pyproject.toml").read_text())
    holder = data["project"] if table == "optional-dependencies" else data
    assert holder[table]["brand-new"] == ["delta>=4.0.0"]
    assert 'name = "delta"' in (repo / "uv.lock").read_text()
    # What stays refused: the lts extra (even when new), and removing from a missing group.
    before = (repo / "pyproject.toml").read_bytes()
    lts = run_cli("--repo", repo, "--engine", "local", "add", "--optional", "lts", "delta")
    assert lts.code == 2 and "uvdock lts pin" in lts.err
    missing = run_cli("--repo", repo, "--engine", "local", "remove", "--group", "nope", "alpha")
    assert missing.code == 2 and "neither an extra nor a dependency group" in missing.err
    assert (repo / "pyproject.toml").read_bytes() == before


# -- review: srun and the lts extra ------------------------------------------------------------


def test_sync_on_srun_of_a_registry_image_is_refused(megatron_repo: Path, run_cli: RunCli) -> None:
    # A registry image gets a fresh pyxis container each step (its tag may move): lost too.
    for dry in (("--dry-run",), ()):
        result = run_cli("--repo", megatron_repo, *dry, *PLACEMENTS["srun"], "sync")
        assert result.code == 2, result.out
        assert "pyxis container that is removed when the step ends" in result.err
        assert "--container-name" in result.err and "uvdock image enroot" in result.err
        assert "uvdock shell" not in result.err  # uvdock is not in the container
        assert result.out == ""


def test_sync_on_srun_into_a_named_pyxis_container_is_planned(
    megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A named pyxis container (engine-args, the user's own: a repository's needs trust)
    # outlives the step inside one allocation.
    monkeypatch.setenv("UVDOCK_ENGINE_ARGS", "--container-name=mlm")
    where = PLACEMENTS["srun"]
    result = run_cli("--repo", megatron_repo, "--json", "--dry-run", *where, "sync")
    assert result.code == 0, result.err
    (sync,) = _uv_commands(result.out)
    assert sync[:4] == ["uv", "sync", "--locked", "--inexact"]
    added = run_cli("--repo", megatron_repo, "--json", "--dry-run", *where, "add", "einops")
    assert added.code == 0, added.err
    assert len(_uv_commands(added.out)) == 2  # the named container is synced after uv add


@pytest.mark.parametrize(
    "words",
    [
        ("remove", "--optional", "lts", "torch"),
        ("remove", "--optional", "LTS", "torch"),
        ("add", "--group", "lts", "einops"),
        ("remove", "--group", "lts", "torch"),
    ],
)
def test_the_lts_extra_is_never_edited_by_add_or_remove(
    words: tuple[str, ...], megatron_repo: Path, run_cli: RunCli
) -> None:
    before = (megatron_repo / "pyproject.toml").read_bytes()
    result = run_cli("--repo", megatron_repo, "--engine", "local", *words)
    assert result.code == 2, result.out + result.err
    assert "the lts extra is not edited with `uvdock" in result.err
    assert "uvdock lts pin" in result.err
    assert (megatron_repo / "pyproject.toml").read_bytes() == before


@pytest.mark.parametrize(("option", "flag"), [("--group", "--group"), ("--optional", "--extra")])
def test_dry_run_add_to_a_new_group_plans_what_the_real_run_does(
    option: str, flag: str, uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = uv_project(("alpha",), groups={"test": ["gamma"]})
    before = (repo / "pyproject.toml").read_bytes()
    argv = ("--repo", repo, "--engine", "local", "add", option, "brand-new", "delta")
    dry = run_cli("--json", "--dry-run", *argv)
    assert dry.code == 0, dry.err
    assert (repo / "pyproject.toml").read_bytes() == before
    planned = _uv_commands(dry.out)
    assert planned[0] == ["uv", "add", "--no-sync", option, "brand-new", "delta"]
    assert planned[1][:3] == ["uv", "sync", "--locked"]
    assert planned[1][planned[1].index("brand-new") - 1] == flag
    real = run_cli("-v", *argv)
    assert real.code == 0, real.err
    said = real.out + real.err
    assert shlex.join(planned[1][1:]) in said  # the sync the dry run planned is the one run
