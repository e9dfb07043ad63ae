"""Profiles resolve against the repository's real extras and groups (Megatron-LM's `dev` is an extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

from uvdock.errors import InputRefused
from uvdock.project import pyproject, syncplan


def test_megatron_dev_profile_uses_extra_dev_and_group_test(megatron_repo: Path) -> None:
    deps = pyproject.read(megatron_repo)
    assert "dev" in deps.extras and "dev" not in deps.groups
    protected = syncplan.protected_packages(megatron_repo / "docker/Dockerfile.ci.dev", ())
    assert protected[:3] == ("torch", "torchvision", "triton") and len(protected) == 16
    plan = syncplan.build("dev", deps, protected=protected)
    assert plan.uv_args[:7] == [
        "sync",
        "--locked",
        "--inexact",
        "--extra",
        "dev",
        "--group",
        "test",
    ]
    assert plan.uv_args.count("--no-install-package") == 16
    assert "torch" in plan.uv_args


def test_a_group_flag_naming_an_extra_becomes_extra(megatron_repo: Path) -> None:
    plan = syncplan.build("dev", pyproject.read(megatron_repo), groups=["dev"])
    assert plan.uv_args.count("dev") == 1
    assert plan.notes and "is an extra" in plan.notes[0]


def test_unknown_name_is_refused_with_what_exists(megatron_repo: Path) -> None:
    with pytest.raises(InputRefused) as info:
        syncplan.build("dev", pyproject.read(megatron_repo), groups=["training-extras"])
    assert "neither an extra nor a dependency group" in info.value.message
    assert info.value.hint and "linting" in info.value.hint and "mlm" in info.value.hint


def test_lint_profile() -> None:
    deps = pyproject.ProjectDeps(extras=(), groups=("linting",))
    assert syncplan.build("lint", deps).uv_args == [
        "sync",
        "--locked",
        "--inexact",
        "--only-group",
        "linting",
    ]


def test_protected_packages_fall_back_when_no_dockerfile(tmp_path: Path) -> None:
    assert syncplan.protected_packages(tmp_path / "missing", ("torch",)) == ("torch",)


def test_the_image_selection_comes_first_and_the_profile_adds_to_it(megatron_repo: Path) -> None:
    text = (megatron_repo / "docker/Dockerfile.ci.dev").read_text()
    image = syncplan.read_selection(text, image_type="dev")
    plan = syncplan.build("dev", pyproject.read(megatron_repo), image=image)
    assert plan.uv_args == [
        "sync",
        "--locked",
        "--inexact",
        *("--extra", "dev", "--extra", "mlm", "--extra", "ssm", "--extra", "te"),
        *("--group", "no_pypi_wheels", "--group", "test"),
    ]
    exact = syncplan.build("dev", pyproject.read(megatron_repo), image=image, exact=True)
    assert exact.uv_args[2] == "--exact" and "--inexact" not in exact.uv_args


def test_an_image_name_the_project_does_not_declare_is_left_out_with_a_note(
    megatron_repo: Path,
) -> None:
    image = syncplan.SyncSelection(("mlm", "gone"), ("no_pypi_wheels",), (), True)
    plan = syncplan.build("dev", pyproject.read(megatron_repo), image=image)
    assert "gone" not in plan.uv_args
    assert any("--extra gone" in note for note in plan.notes)


def test_removals_are_read_from_uv_dry_run_output() -> None:
    # Captured from uv 0.13.9 in the test image: `uv sync --locked --dry-run --exact`.
    output = (
        "Would use project environment at: /opt/venv\n"
        "Resolved 3 packages in 1ms\n"
        "Would uninstall 2 packages\n"
        " - delta==4.0.0\n"
        " - gamma==2.0.0\n"
        " + alpha==1.1.0\n"
    )
    assert syncplan.removals(output) == ["delta==4.0.0", "gamma==2.0.0"]
    assert syncplan.removals("Resolved 3 packages in 1ms\nAudited 2 packages\n") == []
