"""Nothing is written outside the repository, and refused input changes nothing (issue 12 §2)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, commit_all
from samples.pins import pin_files
from samples.recipes import MODEL, RECIPES

LTS_OPTIN = "--lts"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


COMMANDS = {
    "image bump": ("image", "bump", "26.09-py3"),
    "image bump --lts": ("image", "bump", "26.09-py3", "--lts"),
    "lts pin": ("lts", "pin", "einops==9.9.9", "--lts"),
    "recipe mark-broken": (
        "recipe",
        "mark-broken",
        "alpha",
        "--issue",
        "5",
        "--reason",
        "x",
    ),
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(
    "setting",
    [
        "dev-pin-file = '{outside}/victim'",
        "lts-pin-file = '../outside/victim'",
        "dockerfile = 'docker/../../outside/victim'",
        "lts-dockerfile = '{outside}/victim'",
        "gitlab-build-file = '{outside}/victim'",
        "lts-requirements = '{outside}/victim'",
        "recipes-dir = '{outside}'",
    ],
)
def test_configured_paths_outside_are_refused(
    command: str, setting: str, megatron_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_bytes(b"nvcr.io/nvidia/pytorch:26.06-py3\neinops==0.8.2\n")
    (megatron_repo / "uvdock.toml").write_text(setting.format(outside=outside) + "\n")
    before, victim_before = _tree(megatron_repo), _tree(outside)
    result = run_cli("--repo", megatron_repo, *COMMANDS[command])
    assert result.code == 2, (result.out, result.err)
    assert "must be a path inside the repository" in result.err
    assert _tree(megatron_repo) == before and _tree(outside) == victim_before


def test_a_symlinked_folder_pointing_outside_is_refused(
    megatron_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    outside = tmp_path / "elsewhere"
    shutil.move(megatron_repo / "docker", outside)
    (megatron_repo / "docker").symlink_to(outside, target_is_directory=True)
    victim_before = _tree(outside)
    for args in COMMANDS.values():
        result = run_cli("--repo", megatron_repo, *args)
        assert result.code == 2, (args, result.err)
        assert "docker/" in result.err and "inside the repository" in result.err
    assert _tree(outside) == victim_before


def test_a_recipe_file_linked_outside_is_refused_by_the_writer(
    make_repo: Callable[..., Path], tmp_path: Path, run_cli: RunCli
) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(MODEL)
    repo = make_repo({f"{RECIPES}/keep.txt": "x\n"})
    (repo / RECIPES / "model.yaml").symlink_to(outside)
    result = run_cli(
        "--repo", repo, "recipe", "mark-broken", "alpha", "--issue", "5", "--reason", "x"
    )
    assert result.code == 2, result.err
    assert "outside the repository" in result.err
    assert outside.read_text() == MODEL


def test_a_symlinked_pin_file_inside_is_edited_through_the_link(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    files = pin_files()
    real = files.pop("docker/.ngc_version.dev")
    files["pins/dev.txt"] = real
    repo = make_repo(files)
    link = repo / "docker" / ".ngc_version.dev"
    link.symlink_to("../pins/dev.txt")
    commit_all(repo)
    result = run_cli("--repo", repo, "image", "bump", "26.09-py3")
    assert result.code == 0, result.err
    assert link.is_symlink() and os.readlink(link) == "../pins/dev.txt"
    assert (repo / "pins" / "dev.txt").read_bytes() == b"nvcr.io/nvidia/pytorch:26.09-py3\n"


def test_a_bom_in_a_pin_file_is_kept(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    files = pin_files()
    files["docker/.ngc_version.dev"] = "\ufeff" + str(files["docker/.ngc_version.dev"])
    repo = make_repo(files)
    result = run_cli("--repo", repo, "image", "bump", "26.09-py3")
    assert result.code == 0, result.err
    data = (repo / "docker" / ".ngc_version.dev").read_bytes()
    assert data == b"\xef\xbb\xbfnvcr.io/nvidia/pytorch:26.09-py3\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
@pytest.mark.parametrize("command", list(COMMANDS))
def test_as_root_edited_files_keep_their_owner_and_group(
    command: str, megatron_repo: Path, run_cli: RunCli
) -> None:
    (megatron_repo / RECIPES / "a").mkdir()
    (megatron_repo / RECIPES / "a" / "model.yaml").write_text(MODEL)  # holds case alpha
    for path in megatron_repo.rglob("*"):
        # files only: git refuses a work tree whose folders another user owns
        if ".git" not in path.parts and path.is_file():
            os.lchown(path, 1234, 4321)
    before = _tree(megatron_repo)
    result = run_cli("--repo", megatron_repo, *COMMANDS[command])
    assert result.code == 0, result.err
    assert any(before[rel] != data for rel, data in _tree(megatron_repo).items()), result.out
    for rel in _tree(megatron_repo):
        info = (megatron_repo / rel).stat()
        assert (info.st_uid, info.st_gid) == (1234, 4321), rel
