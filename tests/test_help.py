"""Help and usage errors: examples on every command (and each one parses), `uvdock help`,
the global options in their own section, typo suggestions at every level."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli

from uvdock.cli import main as cli
from uvdock.cli import spec as cli_spec
from uvdock.errors import UsageError


def _uvdock_words(example: str) -> list[str]:
    """The words after `uvdock` in an example, up to a shell redirection or pipe."""
    words = shlex.split(example)
    assert words[0] == "uvdock", example
    taken = []
    for word in words[1:]:
        if word in (">", "|", ">>"):
            break
        taken.append(word)
    return taken


def test_every_command_has_two_to_four_examples() -> None:
    for key, spec in cli_spec.COMMANDS.items():
        assert 2 <= len(spec.examples) <= 4, key


@pytest.mark.parametrize(
    ("key", "example"),
    [(key, example) for key, spec in cli_spec.COMMANDS.items() for example in spec.examples],
)
def test_each_example_parses_as_its_command(key: tuple[str, str], example: str) -> None:
    invocation = cli.parse(_uvdock_words(example))
    assert invocation.key == key


@pytest.mark.parametrize("key", list(cli_spec.COMMANDS))
def test_help_ends_with_the_examples_and_lists_global_options_once(
    key: tuple[str, str], run_cli: RunCli
) -> None:
    words = [part for part in key if part]
    result = run_cli(*words, "--help")
    assert result.code == 0
    text = result.out
    assert text.rstrip().endswith(cli_spec.COMMANDS[key].examples[-1])
    option_lines = [line.split()[0] for line in text.splitlines() if line.startswith("  -")]
    assert option_lines.count("--dry-run") == 1 and text.count("global options:\n") == 1
    assert text.index("options:\n") < text.index("global options:\n") < text.index("examples:")
    usage = text.split("\n\n")[0]
    assert usage.startswith("usage: uvdock") and usage.endswith("[global options]")
    assert "--dry-run" not in usage


@pytest.mark.parametrize(
    "words", [["image", "bump"], ["lock"], ["lock", "resolve"], ["sync"], ["recipe", "show"]]
)
def test_help_command_is_the_same_as_dash_dash_help(words: list[str], run_cli: RunCli) -> None:
    assert run_cli("help", *words).out == run_cli(*words, "--help").out
    assert run_cli("help", *words).code == 0


def test_help_for_a_group_lists_its_subcommands(run_cli: RunCli) -> None:
    result = run_cli("help", "image")
    assert result.code == 0
    assert "image bump" in result.out and "uvdock help image SUBCOMMAND" in result.out
    assert run_cli("help").code == 0 and "help COMMAND [SUB]" in run_cli("help").out


def test_long_descriptions_wrap_to_the_terminal(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    text = run_cli("--help").out
    before_examples = text.split("examples:")[0]
    assert max(len(line) for line in before_examples.splitlines()) <= 60


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["image", "bmup"], "error: unknown command `image bmup`; did you mean bump?"),
        (["lock", "resolv"], "error: unknown command `lock resolv`; did you mean resolve?"),
        (
            ["lock", "--chekc"],
            "error: unexpected argument --chekc; a similar option exists: --check",
        ),
        (["syncc"], "error: unknown command `syncc`; did you mean sync?"),
        (["--jsn", "lock"], "error: unexpected argument --jsn; a similar option exists: --json"),
        (
            ["image", "--jsn", "check"],
            "error: unexpected argument --jsn; a similar option exists: --json",
        ),
        (
            ["image", "bump", "--lastest"],
            "error: unexpected argument --lastest; a similar option exists: --latest",
        ),
        (["image", "frobnicate"], "error: unknown command `image frobnicate`; choose from show,"),
    ],
)
def test_typos_get_a_suggestion(words: list[str], message: str, run_cli: RunCli) -> None:
    result = run_cli(*words)
    assert result.code == 2
    lines = result.err.splitlines()
    assert lines[0].startswith("usage: uvdock")
    assert lines[-1].startswith(message)
    assert sum(line.startswith("error:") for line in lines) == 1
    assert "uvdock: error" not in result.err


@pytest.mark.parametrize(
    "words",
    [
        ["image", "--json", "check"],
        ["image", "check", "--json"],
        ["--json", "image", "check"],
        ["lock", "--json", "diff", "HEAD"],
        ["lock", "--dry-run", "--json", "diff", "HEAD"],
    ],
)
def test_global_options_between_group_and_subcommand(words: list[str]) -> None:
    invocation = cli.parse(words)
    assert invocation.key[1] in ("check", "diff")
    assert invocation.options.json


def test_a_global_option_before_a_default_command_stays_with_it() -> None:
    invocation = cli.parse(["lock", "--json", "--check"])
    assert invocation.key == ("lock", "") and invocation.options.json and invocation.args.check


@pytest.mark.parametrize(
    "words", [["-q", "-v", "lock"], ["lock", "-q", "-v"], ["-q", "lock", "--verbose"]]
)
def test_quiet_and_verbose_together_are_refused(words: list[str], run_cli: RunCli) -> None:
    with pytest.raises(UsageError):
        cli.parse(words)
    result = run_cli(*words)
    assert result.code == 2 and "cannot be used together" in result.err


def test_group_json_check_runs_on_a_real_repository(
    megatron_repo: Path, run_cli: RunCli, make_repo: Callable[..., Path]
) -> None:
    import json

    result = run_cli("image", "--json", "--repo", megatron_repo, "check")
    assert result.code in (0, 1), result.err
    assert json.loads(result.out)["ok"] in (True, False)


def test_recipe_unmark_help_says_it_undoes_hand_made_marks_too(run_cli: RunCli) -> None:
    result = run_cli("recipe", "unmark", "--help")
    assert result.code == 0
    assert "by hand" in result.out
    assert "made by uvdock" not in result.out


@pytest.mark.parametrize(
    "example",
    [
        *cli_spec.COMMANDS[("lts", "pin")].examples,
        *cli_spec.COMMANDS[("recipe", "mark-broken")].examples[1:],
        *cli_spec.COMMANDS[("recipe", "unmark")].examples[1:],
        *cli_spec.COMMANDS[("recipe", "show")].examples[1:],
    ],
)
def test_lts_and_recipe_examples_work_on_megatron_lm_files(
    example: str, megatron_repo: Path, run_cli: RunCli
) -> None:
    # A user copies an example from --help: on Megatron-LM's real files it must do what it
    # shows (a case with that environment, a package in the LTS pin set), as a dry run.
    words = _uvdock_words(example)
    if "--dry-run" not in words:
        words = ["--dry-run", *words]
    if tuple(words[1:3]) == ("recipe", "unmark"):
        mark = ["recipe", "mark-broken", words[-1], "--issue", "1", "--reason", "x"]
        assert run_cli("--repo", megatron_repo, *mark).code == 0
    result = run_cli("--repo", megatron_repo, *words)
    assert result.code == 0, result.err
