"""Argv shapes for every engine and mode: what users copy from --dry-run must be right."""

from __future__ import annotations

from pathlib import Path

import pytest

from uvdock.errors import InputRefused
from uvdock.run import engines

MOUNTS = engines.Mounts(Path("/src/repo"), "/workspace", "/home/u/.cache/uv", "/root/.cache/uv")
# The command as a shell runs it, naming a missing one (exit 127)
SHELL = ["/bin/sh", "-c", engines.FOUND_OR_127]


@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_run_mode_mounts_repo_and_cache_with_the_v_form(engine: str) -> None:
    placement = engines.Placement(
        "run", engine, image="megatron-lm:local", extra_args=("--network", "host")
    )
    argv = engines.command_argv(placement, ["uv", "lock"], mounts=MOUNTS, tty=False)
    assert argv == [
        engine,
        "run",
        "--rm",
        "--init",
        "-i",
        "-v",
        "/src/repo:/workspace",
        "-w",
        "/workspace",
        "-v",
        "/home/u/.cache/uv:/root/.cache/uv",
        "-e",
        "TINI_KILL_PROCESS_GROUP=1",
        "-e",
        "UV_LINK_MODE=copy",
        "--network",
        "host",
        "megatron-lm:local",
        *SHELL,
        "uv",
        "lock",
    ]
    assert "--gpus" not in argv


def test_run_mode_with_tty_name_and_gpus() -> None:
    placement = engines.Placement("run", "docker", image="img")
    argv = engines.run_argv(
        placement, ["bash"], mounts=MOUNTS, tty=True, name="uvdock-1", gpus=True
    )
    assert argv[:9] == [
        "docker",
        "run",
        "--rm",
        "--init",
        "-i",
        "-t",
        "--name=uvdock-1",
        "--gpus",
        "all",
    ]
    assert argv[-5:] == ["img", *SHELL, "bash"]


def test_run_mode_without_cache() -> None:
    mounts = engines.Mounts(Path("/r"), "/workspace", None, "/root/.cache/uv")
    argv = engines.run_argv(
        engines.Placement("run", "podman", image="i"), ["true"], mounts=mounts, tty=False
    )
    assert argv == [
        "podman",
        "run",
        "--rm",
        "--init",
        "-i",
        "-v",
        "/r:/workspace",
        "-w",
        "/workspace",
        "-e",
        "TINI_KILL_PROCESS_GROUP=1",
        "i",
        *SHELL,
        "true",
    ]


def test_podmans_init_is_mounted_and_forwards_signals_to_the_commands_group() -> None:
    # catatonit passes a signal to its one child only, unless run with -g: then to the
    # child's whole process group, as a terminal's Ctrl-C reaches every process of a job.
    mounts = engines.Mounts(Path("/r"), "/workspace", None, "/root/.cache/uv")
    placement = engines.Placement("run", "podman", image="i", init="/usr/bin/catatonit")
    argv = engines.run_argv(placement, ["uv", "lock"], mounts=mounts, tty=False)
    assert argv[argv.index("/workspace") + 1 :] == [
        "-v",
        f"/usr/bin/catatonit:{engines.INIT}:ro",
        "i",
        engines.INIT,
        "-g",
        "--",
        *SHELL,
        "uv",
        "lock",
    ]


@pytest.mark.parametrize(("tty", "flags"), [(False, ["-i"]), (True, ["-i", "-t"])])
def test_exec_mode(tty: bool, flags: list[str]) -> None:
    placement = engines.Placement("exec", "docker", container="dev1", env=(("UVDOCK_RUN", "abc"),))
    argv = engines.command_argv(placement, ["uv", "lock", "--check"], mounts=MOUNTS, tty=tty)
    assert argv == [
        "docker",
        "exec",
        *flags,
        "-w",
        "/workspace",
        "-e",
        "UVDOCK_RUN=abc",
        "dev1",
        "uv",
        "lock",
        "--check",
    ]


def test_srun_with_pyxis() -> None:
    placement = engines.Placement("srun", "srun", image="megatron-lm:local")
    argv = engines.srun_argv(placement, ["bash"], mounts=MOUNTS, pty=True, nodes=1, gpus_per_node=8)
    assert argv == [
        "srun",
        "--nodes=1",
        "--gpus-per-node=8",
        "--container-image=megatron-lm:local",
        "--container-mounts=/src/repo:/workspace,/home/u/.cache/uv:/root/.cache/uv",
        "--container-workdir=/workspace",
        "--container-env=PATH",
        "--pty",
        "bash",
    ]


def test_srun_step_variables_go_into_sruns_own_environment() -> None:
    # `--export=ALL,VAR=value` loses to a VAR the caller has (Slurm 22.05): set it in srun's env.
    placement = engines.Placement("srun", "srun", "uvdock-abc", "/i.sqsh")
    argv = engines.srun_argv(placement, ["uv", "lock"], mounts=MOUNTS, pty=False, job_name="j")
    assert not any(a.startswith("--export") for a in argv)
    assert "--container-name=uvdock-abc:no_exec" in argv and "--job-name=j" in argv
    env = engines.srun_env(
        {"UV_CACHE_DIR": "/host/cache", "UV_LINK_MODE": "hardlink"}, placement, MOUNTS
    )
    assert env["UV_CACHE_DIR"] == "/root/.cache/uv" and env["UV_LINK_MODE"] == "copy"


def test_srun_uv_has_no_pty() -> None:
    placement = engines.Placement("srun", "srun", image="x.sqsh")
    argv = engines.command_argv(placement, ["uv", "lock"], mounts=MOUNTS, tty=False)
    assert "--pty" not in argv and argv[-2:] == ["uv", "lock"]


def test_local_is_the_command_itself() -> None:
    assert engines.command_argv(
        engines.Placement("local"), ["uv", "lock"], mounts=MOUNTS, tty=True
    ) == ["uv", "lock"]


@pytest.mark.parametrize(
    ("mounts", "expected"),
    [
        ([{"Source": "/home/u/repo", "Destination": "/workspace"}], "/home/u/repo"),
        ([{"Source": "/home/u", "Destination": "/"}], "/home/u/workspace"),
        ([{"Source": "/home/u", "Destination": "/work"}], None),
        (
            [{"Source": "/a", "Destination": "/"}, {"Source": "/b", "Destination": "/workspace/"}],
            "/b",
        ),
        ([], None),
    ],
)
def test_mounted_at(mounts: list[dict[str, str]], expected: str | None) -> None:
    assert engines.mounted_at(mounts, "/workspace") == expected


def test_inside_ci_container_needs_more_than_dockerenv(tmp_path: Path) -> None:
    assert engines.inside_ci_container({"IMAGE_TYPE": "dev"}, "/nonexistent")
    # A sandbox that is a container but has no CI venv is not the CI container.
    assert not engines.inside_ci_container({}, str(tmp_path / "no-venv"))


OPTION_SHAPED = ["--privileged", "-x", "--upload-pack=touch /tmp/pwned", "-"]


@pytest.mark.parametrize("value", OPTION_SHAPED)
@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_an_option_shaped_container_is_refused(engine: str, value: str) -> None:
    placement = engines.Placement("exec", engine, container=value)
    with pytest.raises(InputRefused, match="would be read as an option") as refused:
        engines.command_argv(placement, ["uv", "lock"], mounts=MOUNTS, tty=False)
    assert refused.value.exit_code == 2


@pytest.mark.parametrize("value", OPTION_SHAPED)
@pytest.mark.parametrize("mode", ["run", "srun"])
def test_an_option_shaped_image_is_refused(mode: str, value: str) -> None:
    placement = engines.Placement(mode, "podman" if mode == "run" else "srun", image=value)
    with pytest.raises(InputRefused, match="image"):
        engines.command_argv(placement, ["uv", "lock"], mounts=MOUNTS, tty=False)


def test_engine_args_stay_options_and_the_image_stays_the_operand() -> None:
    placement = engines.Placement(
        "run", "podman", image="img:1", extra_args=("--network", "host", "--privileged")
    )
    argv = engines.run_argv(placement, ["uv", "-v", "lock"], mounts=MOUNTS, tty=False, name="n")
    image_at = argv.index("img:1")
    assert argv[image_at - 3 : image_at] == ["--network", "host", "--privileged"]
    assert argv[image_at + 1 :] == [*SHELL, "uv", "-v", "lock"]  # the command's own options follow


def test_srun_values_are_glued_to_their_options() -> None:
    # `--container-image=VALUE`: an odd value can never become an option of its own.
    placement = engines.Placement("srun", "srun", image="reg/img:1")
    argv = engines.srun_argv(placement, ["true"], mounts=MOUNTS, pty=False)
    assert "--container-image=reg/img:1" in argv and "reg/img:1" not in argv


def test_user_link_mode_is_kept_and_no_cache_means_none() -> None:
    placement = engines.Placement("run", "podman", image="i", env=(("UV_LINK_MODE", "symlink"),))
    argv = engines.run_argv(placement, ["true"], mounts=MOUNTS, tty=False)
    assert "UV_LINK_MODE=symlink" in argv and "UV_LINK_MODE=copy" not in argv
    bare = engines.Mounts(Path("/r"), "/workspace", None, "/root/.cache/uv")
    argv = engines.run_argv(
        engines.Placement("run", "podman", image="i"), ["true"], mounts=bare, tty=False
    )
    assert not any(a.startswith("UV_LINK_MODE") for a in argv)


def test_local_by_hand_says_so() -> None:
    assert "already inside" not in engines.Placement("local", by_hand=True).describe()
    assert "--engine local" in engines.Placement("local", by_hand=True).describe()
    assert "inside the CI container" in engines.Placement("local").describe()


def test_srun_step_path_starts_with_the_venv() -> None:
    # pyxis keeps the caller's PATH over the image's ENV PATH, which names the venv first:
    # without this, `uvdock --engine srun run -- python -V` finds no python.
    placement = engines.Placement("srun", "srun", "uvdock-abc", "/i.sqsh")
    env = engines.srun_env({"PATH": "/usr/bin:/bin"}, placement, MOUNTS, venv="/opt/venv")
    assert env["PATH"] == "/opt/venv/bin:/usr/bin:/bin"
    argv = engines.srun_argv(placement, ["python"], mounts=MOUNTS, pty=False)
    assert "--container-env=PATH" in argv  # else enroot's login.defs PATH replaces it
    again = engines.srun_env(env, placement, MOUNTS, venv="/opt/venv")
    assert again["PATH"] == env["PATH"]  # not prepended twice
