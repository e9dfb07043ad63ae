"""The srun engine's image and reusable container name, without a cluster."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import RunCli

from uvdock.errors import EnvironmentUnusable
from uvdock.run import slurm, slurm_containers


def _sqsh(path: Path) -> Path:
    path.write_bytes(slurm.SQUASHFS_MAGIC + b"\0" * 60)
    return path


def test_a_reimported_sqsh_gets_a_new_container_name(tmp_path: Path) -> None:
    image = _sqsh(tmp_path / "ci.sqsh")
    before = slurm.container_name(str(image), tmp_path, 0)
    assert before.startswith("uvdock-") and before == slurm.container_name(str(image), tmp_path, 0)
    fresh = _sqsh(tmp_path / "ci.sqsh.part")
    os.replace(fresh, image)  # what `uvdock image enroot` does
    assert slurm.container_name(str(image), tmp_path, 0) != before
    os.utime(image, ns=(1, 1))
    assert slurm.container_name(str(image), tmp_path, 0) not in (before, "")


def test_two_users_or_two_checkouts_never_share_a_writable_container(tmp_path: Path) -> None:
    """`uvdock sync` writes into the container: keyed by image, user and checkout."""
    image = str(_sqsh(tmp_path / "ci.sqsh"))
    names = {
        slurm.container_name(image, tmp_path / "a", 0),
        slurm.container_name(image, tmp_path / "b", 0),
        slurm.container_name(image, tmp_path / "a", 1000),
    }
    assert len(names) == 3


def test_a_registry_reference_has_no_reusable_name(tmp_path: Path) -> None:
    assert slurm.container_name("nvcr.io#nvidia/pytorch:25.01-py3", tmp_path, 0) == ""


@pytest.mark.parametrize(
    ("image", "local"),
    [
        ("megatron-lm:local", True),
        ("localhost/ci:dev", True),
        ("nvcr.io#nvidia/pytorch:25.01-py3", False),
        ("nvidia/cuda:12.4.0-base-ubuntu22.04", False),
    ],
)
def test_local_tags(image: str, local: bool) -> None:
    assert slurm.is_local_tag(image) is local


def test_the_local_tag_means_the_enroot_output(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentUnusable, match="local image tag") as refused:
        slurm.step_image("megatron-lm:local", repo=tmp_path, enroot_output="m.sqsh")
    assert refused.value.exit_code == 3 and "uvdock image enroot" in (refused.value.hint or "")
    _sqsh(tmp_path / "m.sqsh")
    got = slurm.step_image("megatron-lm:local", repo=tmp_path, enroot_output="m.sqsh")
    assert got == str(tmp_path / "m.sqsh")  # absolute: pyxis reads a path only from '/' or '.'


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["-p", "gpu"], {}, "gpu"),
        (["-pgpu"], {}, "gpu"),
        (["--partition=gpu", "-t", "5"], {}, "gpu"),
        (["--partition", "gpu"], {}, "gpu"),
        ([], {"SLURM_PARTITION": "batch"}, "batch"),
        (["--time=5"], {}, ""),
    ],
)
def test_partition_of(args: list[str], env: dict[str, str], expected: str) -> None:
    assert slurm.partition_of(args, env) == expected


def test_the_lts_image_means_the_lts_enroot_output(tmp_path: Path) -> None:
    assert slurm.lts_output("megatron-lm.sqsh") == "megatron-lm-lts.sqsh"
    assert slurm.lts_output("out/ci") == "out/ci-lts.sqsh"
    with pytest.raises(EnvironmentUnusable) as refused:
        slurm.step_image(
            "megatron-lm:local-lts",
            repo=tmp_path,
            enroot_output="m.sqsh",
            lts_image="megatron-lm:local-lts",
        )
    assert "`uvdock image enroot --lts`" in (refused.value.hint or "")
    _sqsh(tmp_path / "m-lts.sqsh")
    got = slurm.step_image(
        "megatron-lm:local-lts",
        repo=tmp_path,
        enroot_output="m.sqsh",
        lts_image="megatron-lm:local-lts",
    )
    assert got == str(tmp_path / "m-lts.sqsh")


def test_a_local_tag_other_than_the_imported_one_is_refused(tmp_path: Path) -> None:
    _sqsh(tmp_path / "m.sqsh")
    slurm.source_file(tmp_path / "m.sqsh").write_text("megatron-lm:local\n")
    got = slurm.step_image("megatron-lm:local", repo=tmp_path, enroot_output="m.sqsh")
    assert got == str(tmp_path / "m.sqsh")
    with pytest.raises(
        EnvironmentUnusable, match=r"m\.sqsh holds megatron-lm:local, not mlm:other"
    ):
        slurm.step_image("mlm:other", repo=tmp_path, enroot_output="m.sqsh")


def test_a_symlink_to_the_image_shares_its_container(tmp_path: Path) -> None:
    image = _sqsh(tmp_path / "shared.sqsh")
    (tmp_path / "link.sqsh").symlink_to(image)
    link = slurm.container_name(str(tmp_path / "link.sqsh"), tmp_path, 0)
    assert link == slurm.container_name(str(image), tmp_path, 0)


def test_the_unpacked_record_is_read_back_and_a_damaged_one_trusts_nothing(
    tmp_path: Path,
) -> None:
    git_dir = tmp_path / ".git"
    slurm_containers.mark_ready(git_dir, "uvdock-a", ["n2", "n1"])
    slurm_containers.mark_ready(git_dir, "uvdock-b", ["n1", "n1"])
    assert slurm_containers.ready_nodes(git_dir, "uvdock-a") == ["n1", "n2"]  # per node
    assert slurm_containers.ready_nodes(git_dir, "uvdock-c") == []
    slurm_containers.forget(git_dir, ["n1"])  # pruned there: the other node keeps its record
    assert slurm_containers.ready_nodes(git_dir, "uvdock-a") == ["n2"]
    assert slurm_containers.ready_nodes(git_dir, "uvdock-b") == []
    # A record of one name a line (before it was per node) names no node: unpack again.
    (git_dir / "uvdock" / "srun-containers").write_text("uvdock-a\n")
    assert slurm_containers.ready_nodes(git_dir, "uvdock-a") == []
    # Not text (a disk error, a hostile clone): unpack again rather than stop with a crash.
    (git_dir / "uvdock" / "srun-containers").write_bytes(b"\xff\xfe n1 uvdock-a\n")
    assert slurm_containers.ready_nodes(git_dir, "uvdock-a") == []


def test_shell_slurm_without_the_sqsh_names_no_flag_the_user_never_gave(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    result = run_cli("--repo", megatron_repo, "shell", "--slurm")
    assert result.code == 3, result.err
    assert "--engine" not in result.err  # the user typed --slurm
    assert "megatron-lm:local is a local image tag" in result.err
    assert "uvdock image enroot" in result.err
