"""Profiles resolve against the repository's real extras and groups (Megatron-LM's `dev` is an extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

from uvdock.errors import InputRefused
from uvdock.project import pyproject, syncplan


def test_megatron_dev_profile_uses_extra_dev_and_group_test(megatron_repo: Path) -> None:
    deps = pyproject.read(megatron_repo)
    assert "dev" in deps.extras and "dev" not in deps.groups
    protected = pyproject.protected_packages(megatron_repo / "docker/Dockerfile.ci.dev", ())
    assert protected[:3] == ("torch", "torchvision", "triton") and len(protected) == 16
    plan = syncplan.build("dev", deps, protected=protected)
    assert plan.uv_args[:6] == ["sync", "--locked", "--extra", "dev", "--group", "test"]
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
    deps = pyproject.ProjectDeps(extras=(), groups=("linting",), default_groups=())
    assert syncplan.build("lint", deps).uv_args == ["sync", "--locked", "--only-group", "linting"]


def test_protected_packages_fall_back_when_no_dockerfile(tmp_path: Path) -> None:
    assert pyproject.protected_packages(tmp_path / "missing", ("torch",)) == ("torch",)
