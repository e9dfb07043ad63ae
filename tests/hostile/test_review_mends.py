"""Hostile inputs found when the whole change was read again: each was an internal error
(exit 4) or a refusal that could be walked around."""

from __future__ import annotations

from pathlib import Path

from conftest import RunCli

from uvdock.files import state_store
from uvdock.registry import oci
from uvdock.registry.auth import _decode
from uvdock.run.ownership import rw_bind_sources


def test_a_non_ascii_auth_entry_is_no_credential() -> None:
    assert _decode({"auth": "café"}) is None  # a ValueError, not binascii.Error, before


def test_registry_answers_of_the_wrong_shape_hold_nothing() -> None:
    assert oci.tags_page({"tags": 5}) == []
    assert oci.list_platforms({"manifests": {"linux/amd64": 1}}) == []
    assert oci.list_entries({"manifests": "x"}) == []


def test_engine_args_mounts_of_root_in_every_spelling_are_read_write_sources() -> None:
    assert rw_bind_sources(("-v/:/host",)) == ["/"]
    assert rw_bind_sources(("--mount", "type=bind,src=/,dst=/x,readonly=false")) == ["/"]
    assert rw_bind_sources(("--mount", "type=bind,src=/,dst=/x,readonly")) == []
    assert rw_bind_sources(("--mount", "type=bind,src=/,dst=/x,ro=true")) == []


def test_a_workflow_symlink_loop_is_no_pin(megatron_repo: Path, run_cli: RunCli) -> None:
    workflows = megatron_repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "loop.yml").symlink_to("loop.yml")
    result = run_cli("--repo", megatron_repo, "image", "check")
    assert result.code == 0, result.err


def test_doctor_in_a_project_whose_pyproject_is_not_utf8(
    megatron_repo: Path, run_cli: RunCli, tmp_path: Path
) -> None:
    (megatron_repo / "pyproject.toml").write_bytes(b"[project]\nname = '\xff'\n")
    log = tmp_path / "job.log"
    log.write_text("ModuleNotFoundError: No module named 'einops'\n")
    result = run_cli("--repo", megatron_repo, "doctor", log)
    assert result.code == 0, result.err  # an unreadable pyproject declares nothing
    assert "uvdock add einops" in result.out


def test_a_damaged_saved_state_is_one_line_not_a_crash(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    folder = state_store.state_dir(megatron_repo / ".git")
    folder.mkdir(parents=True)
    for damage in ("[]", '{"path": "uv.lock"}', "not json"):
        (folder / state_store.STATE_FILE).write_text(damage)
        result = run_cli("--repo", megatron_repo, "lock", "resolve", "--abort")
        assert result.code == 3, result.err
        assert "saved state of `lock resolve` is unreadable" in result.err
        assert f"remove {folder}" in result.err
        assert "internal error" not in result.err
    assert folder.is_dir()  # the state is the user's to look at: nothing was removed
