"""The root handler: exit codes, one-line errors, no tracebacks on the terminal."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli

from uvdock.cli import main as cli
from uvdock.cli import spec as cli_spec


def test_version(run_cli: RunCli) -> None:
    result = run_cli("--version")
    assert result.code == 0 and result.out.startswith("uvdock ")


def test_unknown_command_suggests_close_names(run_cli: RunCli) -> None:
    result = run_cli("syncc")
    assert result.code == 2
    assert "did you mean sync" in result.err


def test_bad_option_is_the_usage_line_and_one_error_line(run_cli: RunCli) -> None:
    result = run_cli("lock", "--frobnicate")
    assert result.code == 2
    *usage, error = result.err.splitlines()  # a long usage wraps like argparse's
    assert usage[0].startswith("usage: uvdock lock ") and usage[-1].endswith("[global options]")
    assert not any(line.startswith("error") for line in usage)
    assert error == "error: unexpected argument --frobnicate"


@pytest.mark.parametrize("words", [("image", "-x"), ("image", "-x", "bump")])
def test_an_unknown_option_before_a_subcommand_is_named(
    run_cli: RunCli, words: tuple[str, ...]
) -> None:
    result = run_cli(*words)
    assert result.code == 2
    assert result.err.splitlines()[-1] == "error: unexpected argument -x"


def test_a_missing_argument_has_no_doubled_prefix(run_cli: RunCli) -> None:
    result = run_cli("recipe", "mark-broken", "--issue", "1", "--reason", "x")
    assert result.code == 2
    *usage, error = result.err.splitlines()  # a long usage wraps like argparse's
    assert usage[0].startswith("usage: uvdock recipe mark-broken")
    assert not any(line.startswith("error") for line in usage)
    assert error == "error: the following arguments are required: CASE"


def test_not_a_git_repository_is_exit_3(tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", tmp_path, "--dry-run", "lock")
    assert result.code == 3
    assert "not inside a git repository" in result.err


def test_internal_error_is_one_line_and_a_log(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(argv: object = None, session: object = None) -> int:
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(cli, "run", boom)
    assert cli.main([]) == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error: ZeroDivisionError: bug" in err
    log = Path(err.split("traceback in ")[1].rstrip(")\n"))
    assert "ZeroDivisionError" in log.read_text()
    log.unlink()


def test_global_options_are_accepted_after_the_command(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({"pyproject.toml": "[project]\nname = 'd'\nversion = '0'\n"})
    result = run_cli("lock", "--repo", repo, "--dry-run", "--engine", "podman", "--image", "img:1")
    assert result.code == 0, result.err
    assert result.out.startswith("podman run --rm --init -i") and " img:1 " in result.out
    assert result.out.rstrip().endswith(" uv lock")


def test_dry_run_needs_no_engine(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"pyproject.toml": "[project]\nname = 'd'\nversion = '0'\n"})
    empty_path = tmp_path / "empty-bin"
    empty_path.mkdir()
    git = subprocess.run(
        ["which", "git"], capture_output=True, text=True, check=True
    ).stdout.strip()
    (empty_path / "git").symlink_to(git)
    env = {"PATH": str(empty_path), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "uvdock", "--repo", str(repo), "--dry-run", "lock"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        proc.stdout.startswith("docker run --rm --init -i") and " megatron-lm:local " in proc.stdout
    )
    assert proc.stdout.rstrip().endswith(" uv lock")


def test_run_without_a_command_is_refused(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    result = run_cli("--repo", make_repo(), "--dry-run", "run", "--")
    assert result.code == 2


@pytest.mark.parametrize(
    "words",
    [
        ["lock"],
        ["--repo", "/r", "--dry-run", "lock", "--check"],
        ["--repo=/r", "-v", "-q", "--json", "image", "show"],
        ["--engine", "podman", "--container", "c1", "run", "--", "ls", "--json"],
        ["--image=img:1", "--engine=srun", "sync"],
    ],
)
def test_hand_read_global_options_agree_with_argparse(words: list[str]) -> None:
    from uvdock.cli.parse import top_parser

    scanned = cli_spec.scan_global_options(words)
    assert scanned is not None
    found, rest = scanned
    parsed = vars(top_parser().parse_args(words))
    # argparse's REMAINDER swallows a `--` that the command itself would drop anyway.
    assert [parsed["command"], *parsed["rest"]] == [w for w in rest if w != "--"]
    for name, value in found.items():
        assert parsed[name] == value
    for name in cli_spec.GlobalOptions._fields:
        if name not in found:
            assert not parsed[name]


@pytest.mark.parametrize(
    "words",
    [["--help"], ["-vq", "lock"], ["--engine", "lxc", "lock"], ["--repo"], ["--bogus", "lock"]],
)
def test_unusual_global_options_are_left_to_argparse(words: list[str]) -> None:
    assert cli_spec.scan_global_options(words) is None


def test_run_takes_global_options_after_the_command(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo()
    result = run_cli(
        "run",
        "--repo",
        repo,
        "--dry-run",
        "--engine",
        "podman",
        "--image",
        "i:1",
        "--",
        "ls",
        "--json",
    )
    assert result.code == 0, result.err
    assert " i:1 " in result.out and result.out.rstrip().endswith(" ls --json")
    help_result = run_cli("run", "--help")
    assert help_result.code == 0 and "uvdock run" in help_result.out


@pytest.mark.parametrize("key", list(cli_spec.COMMANDS))
def test_defaults_read_without_argparse_are_argparses(key: tuple[str, str]) -> None:
    """A command given no words gets, without argparse, exactly what argparse would give it,
    or is left to argparse."""
    import importlib

    from uvdock.cli.parse import command_parser

    spec = cli_spec.COMMANDS[key]
    command = importlib.import_module(f"uvdock.commands.{spec.module}").Command()
    fast = cli._defaults(command)
    if fast is not None:
        assert vars(fast) == vars(command.parse([], lambda: command_parser(key, spec)))


def test_image_check_loads_no_argparse(megatron_repo: Path) -> None:
    # argparse and what it loads (gettext, locale, shutil) cost more than image check may
    # spend on start-up (bench/startup.py).
    code = (
        "import sys; from uvdock.cli.main import main; code = main(sys.argv[1:]); "
        "assert 'argparse' not in sys.modules; sys.exit(code)"
    )
    argv = [sys.executable, "-c", code, "--repo", str(megatron_repo), "image", "check"]
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
