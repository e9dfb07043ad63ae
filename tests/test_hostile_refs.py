"""Refs from users and configs cannot inject git options (issue 12 §1)."""

from __future__ import annotations

from pathlib import Path

import hypothesis
import pytest
from conftest import RunCli, commit_all, git
from hypothesis import strategies as st
from samples.lock_conflicts import make_conflict, snapshot

from uvdock.errors import InputRefused
from uvdock.run import git as run_git


def _payload(marker: Path) -> str:
    return f"origin/--upload-pack=touch {marker};git-upload-pack"


def test_onto_cannot_run_a_command(wheelhouse: Path, tmp_path: Path, run_cli: RunCli) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge", with_origin=True)
    marker = tmp_path / "PWNED"
    before = snapshot(conflict.repo)
    result = run_cli(
        "--repo", conflict.repo, "--engine", "local", "lock", "resolve", "--onto", _payload(marker)
    )
    assert result.code == 2, result.err
    assert not marker.exists()
    assert "--onto" in result.err
    assert snapshot(conflict.repo) == before


@pytest.mark.parametrize("where", ["uvdock.toml", "pyproject.toml"])
def test_configured_base_ref_cannot_run_a_command(
    where: str, wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    conflict = make_conflict(tmp_path, wheelhouse, "merge", with_origin=True)
    marker = tmp_path / "PWNED"
    value = _payload(marker).replace("\\", "\\\\")
    if where == "uvdock.toml":
        (conflict.repo / "uvdock.toml").write_text(f'base-ref = "{value}"\n')
    else:
        env_table = f'\n[tool.uvdock]\nbase-ref = "{value}"\n'
        text = (conflict.repo / "pyproject.toml").read_text()
        # the conflict leaves pyproject.toml merged; the table goes at its end
        (conflict.repo / "pyproject.toml").write_text(text + env_table)
    result = run_cli("--repo", conflict.repo, "--engine", "local", "lock", "resolve")
    assert result.code == 2, result.err
    assert not marker.exists()
    assert "base-ref" in result.err


@pytest.mark.parametrize(
    "args",
    [
        ("lock", "diff", "--output=/tmp/x"),
        ("lock", "diff", "HEAD", "-p"),
        ("lts", "drift", "--base=--output=x"),
    ],
)
def test_option_shaped_revisions_are_refused(
    args: tuple[str, ...], make_repo: object, tmp_path: Path, run_cli: RunCli
) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "uv.lock").write_text('version = 1\nrequires-python = ">=3.11"\n')
    (repo / "docker" / "lts").mkdir(parents=True)
    (repo / "docker" / "lts" / "requirements.txt").write_text("alpha==1.0\n")
    commit_all(repo)
    result = run_cli("--repo", repo, *args)
    assert result.code == 2, (result.out, result.err)
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    "ref",
    ["-x", "--upload-pack=touch x", "origin/--upload-pack=x", "a/-b", "", "a\nb", "a b", "x:y"],
)
def test_checked_ref_refuses_option_shaped_and_odd_words(ref: str) -> None:
    with pytest.raises(InputRefused):
        run_git.checked_ref(ref, "--onto")


@pytest.mark.parametrize(
    "ref", ["origin/main", "main", "HEAD~1", "v1.0^{commit}", "abc123", "@{u}"]
)
def test_checked_ref_keeps_ordinary_revisions(ref: str) -> None:
    assert run_git.checked_ref(ref, "--onto") == ref


def test_git_argv_builders_keep_option_shaped_values_as_operands(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "f").write_text("x\n")
    commit_all(repo)
    marker = tmp_path / "PWNED"
    hostile = f"--output={marker}"
    assert run_git.show_file(repo, hostile, "f") is None
    assert run_git.verify_commit(repo, hostile) is None
    assert run_git.grep_files(repo, hostile) == []
    assert run_git.remote_url(repo, hostile) is None
    assert run_git.config_get(repo, "--add") is None
    assert not run_git.fetch(repo, "--upload-pack=touch " + str(marker), "main").ok
    assert not run_git.fetch(repo, "origin", "--upload-pack=touch " + str(marker)).ok
    assert not marker.exists()


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.text(alphabet=st.sampled_from("-/:+ ~^@{}.ab\n\t=;"), max_size=12))
def test_generated_refs_are_refused_or_cannot_be_options(ref: str) -> None:
    try:
        checked = run_git.checked_ref(ref, "--onto")
    except InputRefused as exc:
        assert exc.exit_code == 2
        return
    assert checked == ref and ref
    assert not any(part.startswith("-") for part in ref.split("/"))
    assert not set(ref) & set(" \n\t:")


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    parts=st.lists(st.sampled_from(["..", ".", "docker", "out", "", "/", "x.txt"]), max_size=5)
)
def test_generated_config_paths_are_refused_or_inside(
    parts: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    from uvdock.config import settings as config

    root = tmp_path_factory.mktemp("cfg")
    repo, outside = root / "repo", root / "outside"
    repo.mkdir()
    outside.mkdir()
    (repo / "out").symlink_to(outside, target_is_directory=True)
    value = "/".join(parts)
    try:
        loaded = config.load_layers(repo, env={"UVDOCK_DEV_PIN_FILE": value}).config
    except InputRefused:
        return
    real = (repo / loaded.dev_pin_file).resolve()
    assert real == repo.resolve() or repo.resolve() in real.parents


def test_a_path_holding_the_word_blob_is_read_as_the_path(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a blob b").mkdir()
    (repo / "a blob b" / "uv.lock").write_text("lock\n")
    commit_all(repo)
    assert run_git.show_file(repo, "HEAD", "a blob b/uv.lock") == b"lock\n"
    assert run_git.show_file(repo, "HEAD", "a blob b/absent") is None
    assert run_git.show_file(repo, "HEAD", "a blob b") is None  # a folder is no file
    assert run_git.show_file(repo, "blob", "a blob b/uv.lock") is None
