"""`uvdock completion bash|zsh|fish`: scripts generated from the command table, loaded in the
real shells."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli

from uvdock.cli import spec as cli_spec


def _script(run_cli: RunCli, shell: str, tmp_path: Path) -> Path:
    result = run_cli("completion", shell)
    assert result.code == 0, result.err
    path = tmp_path / f"uvdock.{shell}"
    path.write_text(result.out)
    return path


def _bin_dir(tmp_path: Path) -> Path:
    """A PATH entry with `uvdock` running this checkout (for --list-cases at TAB time)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    wrapper = folder / "uvdock"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m uvdock "$@"\n')
    wrapper.chmod(0o755)
    return folder


def _bash_complete(script: Path, line: str, cwd: Path, path: Path) -> list[str]:
    words = line.split(" ")
    program = (
        f"source {script}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
        f"COMP_CWORD={len(words) - 1}; _uvdock; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    env = {**os.environ, "PATH": f"{path}:{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, cwd=cwd, env=env, check=True
    )
    return sorted(proc.stdout.split())


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("uvdock im", ["image"]),
        ("uvdock image b", ["build", "bump"]),
        ("uvdock lock ", ["diff", "resolve"]),
        ("uvdock lock --ch", ["--check"]),
        ("uvdock image --json ch", ["check"]),
        ("uvdock sync --profile ", ["dev", "lint", "lts"]),
        ("uvdock --engine p", ["podman"]),
        ("uvdock --col", ["--color"]),
        ("uvdock --color ", ["always", "auto", "never"]),
        ("uvdock help rec", ["recipe"]),
        ("uvdock image bump --lat", ["--latest"]),
        ("uvdock recipe mark-broken --is", ["--issue"]),
        ("uvdock recipe show ckpt", ["ckpt_converter"]),
        ("uvdock recipe mark-broken gpt_16", ["gpt_16b_perf"]),
        ("uvdock completion ", ["bash", "fish", "zsh"]),
        ("uvdock completion z", ["zsh"]),
        # The same option takes other values in other commands: each command's own choices.
        ("uvdock image check --format ", ["github", "gitlab", "text"]),
        ("uvdock --json image check --format g", ["github", "gitlab"]),
        ("uvdock lock diff --format ", ["markdown", "text"]),
        ("uvdock add --format ", ["markdown", "text"]),
    ],
)
def test_bash_completes_commands_options_and_case_names(
    line: str, expected: list[str], run_cli: RunCli, tmp_path: Path, megatron_repo: Path
) -> None:
    script = _script(run_cli, "bash", tmp_path)
    assert _bash_complete(script, line, megatron_repo, _bin_dir(tmp_path)) == expected


def test_bash_offers_each_option_once(run_cli: RunCli, tmp_path: Path, megatron_repo: Path) -> None:
    script = _script(run_cli, "bash", tmp_path)
    offered = _bash_complete(script, "uvdock lock resolve --", megatron_repo, _bin_dir(tmp_path))
    assert len(offered) == len(set(offered)), offered


def test_every_command_is_in_the_bash_script(run_cli: RunCli, tmp_path: Path) -> None:
    text = _script(run_cli, "bash", tmp_path).read_text()
    for group, name in cli_spec.COMMANDS:
        assert f'"{group}/{name}")' in text


@pytest.mark.skipif(
    shutil.which("zsh") is None, reason="zsh is not installed (apt-get install zsh)"
)
def test_the_zsh_script_parses_and_completes(
    run_cli: RunCli, tmp_path: Path, megatron_repo: Path
) -> None:
    script = _script(run_cli, "zsh", tmp_path)
    subprocess.run(["zsh", "-n", str(script)], check=True)
    # compsys calls bash-style functions with ksharrays set (bashcompinit's `emulate -L sh`).
    program = (
        f"autoload -U compinit; compinit -u; source {script}; setopt ksharrays; "
        "COMP_WORDS=(uvdock image b); COMP_CWORD=2; _uvdock; print -l ${COMPREPLY[@]}"
    )
    proc = subprocess.run(
        ["zsh", "-f", "-c", program], capture_output=True, text=True, check=True, cwd=megatron_repo
    )
    # bashcompinit's compgen leaves the prefix match to compadd: every image subcommand.
    assert sorted(proc.stdout.split()) == sorted(
        name for group, name in cli_spec.COMMANDS if group == "image"
    )


@pytest.mark.skipif(
    shutil.which("fish") is None, reason="fish is not installed (apt-get install fish)"
)
def test_the_fish_script_parses_and_completes(
    run_cli: RunCli, tmp_path: Path, megatron_repo: Path
) -> None:
    script = _script(run_cli, "fish", tmp_path)
    subprocess.run(["fish", "-n", str(script)], check=True)
    env = {**os.environ, "PATH": f"{_bin_dir(tmp_path)}:{os.environ['PATH']}"}

    def complete(line: str) -> list[str]:
        proc = subprocess.run(
            ["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            check=True,
            cwd=megatron_repo,
            env=env,
        )
        return sorted(row.split("\t")[0] for row in proc.stdout.splitlines())

    assert complete("uvdock im") == ["image"]
    assert complete("uvdock image b") == ["build", "bump"]
    assert complete("uvdock sync --profile ") == ["dev", "lint", "lts"]
    assert "ckpt_converter" in complete("uvdock recipe show ")
    assert complete("uvdock completion ") == ["bash", "fish", "zsh"]
    assert complete("uvdock image check --format ") == ["github", "gitlab", "text"]
    assert complete("uvdock lock diff --format ") == ["markdown", "text"]


def test_no_shell_is_refused(run_cli: RunCli) -> None:
    result = run_cli("completion")
    assert result.code == 2 and "name a shell" in result.err


def test_list_cases_is_silent_outside_a_repository(run_cli: RunCli, tmp_path: Path) -> None:
    result = run_cli("--repo", tmp_path, "completion", "--list-cases")
    assert result.code == 0 and result.out == "" and result.err == ""


# -- hostile case names: completion offers them as literal words and never runs them ----------

HOSTILE_NAMES = (
    "$(touch${IFS}pwned)",
    "`touch pwned-backtick`",
    "it's",
    'say "hi"',
    "a b",
    "x*",
    "*",
    "-dash",
    "plain_case",
)
CONTROL_NAMES = ("esc\x1b[31mred", "bidi\u202egnp", "tab\tname")


def _yaml_item(name: str) -> str:
    return f'"{name}"' if "'" in name else "'" + name + "'"


@pytest.fixture
def hostile_repo(tmp_path: Path) -> Path:
    """A committed repository whose recipe holds test_case names that are shell code."""
    from conftest import commit_all, init_repo

    repo = tmp_path / "hostile"
    recipes = repo / "tests" / "test_utils" / "recipes" / "h100"
    recipes.mkdir(parents=True)
    rows = "".join(
        f"  - test_case: [{_yaml_item(name)}]\n    products:\n"
        "      - environment: [dev]\n        scope: [mr]\n        platforms: [dgx_h100]\n"
        for name in (*HOSTILE_NAMES, *CONTROL_NAMES)
    )
    (recipes / "hostile.yaml").write_text(
        "type: basic\nformat_version: 1\nspec:\n  name: x\nproducts:\n" + rows
    )
    init_repo(repo)
    commit_all(repo, "hostile recipe")
    return repo


def _nothing_ran(repo: Path) -> None:
    assert not list(repo.glob("pwned*")), "completion ran repository text"


def _shell_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{_bin_dir(tmp_path)}:{os.environ['PATH']}", "IFS": " "}


def test_bash_offers_hostile_case_names_as_quoted_literal_words(
    run_cli: RunCli, tmp_path: Path, hostile_repo: Path
) -> None:
    script = _script(run_cli, "bash", tmp_path)
    program = (
        f'source {script}; COMP_WORDS=(uvdock recipe show "$1"); COMP_CWORD=3; _uvdock; '
        # what TAB inserts is shell text: let bash read it back as the word it becomes
        'for w in "${COMPREPLY[@]}"; do eval "printf \'%s\\0\' $w"; done'
    )

    def offered(typed: str) -> list[str]:
        proc = subprocess.run(
            ["bash", "-c", program, "bash", typed],
            capture_output=True,
            text=True,
            cwd=hostile_repo,
            env=_shell_env(tmp_path),
            check=True,
        )
        return sorted(proc.stdout.split("\0")[:-1])

    assert offered("") == sorted((*HOSTILE_NAMES, *CONTROL_NAMES))
    assert offered("$(") == ["$(touch${IFS}pwned)"]
    assert offered("'a ") == ["a b"]  # a quote the user opened is not part of the name
    assert offered("x") == ["x*"]
    _nothing_ran(hostile_repo)


def test_bash_shows_control_characters_escaped(
    run_cli: RunCli, tmp_path: Path, hostile_repo: Path
) -> None:
    script = _script(run_cli, "bash", tmp_path)
    program = f"source {script}; COMP_WORDS=(uvdock recipe show ''); COMP_CWORD=3; _uvdock; "
    program += "printf '%s\\n' \"${COMPREPLY[@]}\""
    proc = subprocess.run(
        ["bash", "-c", program],
        capture_output=True,
        text=True,
        cwd=hostile_repo,
        env=_shell_env(tmp_path),
        check=True,
    )
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout and "\t" not in proc.stdout
    assert "$'esc\\x1b[31mred'" in proc.stdout.splitlines()


@pytest.mark.skipif(
    shutil.which("zsh") is None, reason="zsh is not installed (apt-get install zsh)"
)
def test_zsh_offers_hostile_case_names_as_literal_words(
    run_cli: RunCli, tmp_path: Path, hostile_repo: Path
) -> None:
    script = _script(run_cli, "zsh", tmp_path)
    # bashcompinit's own path: its compgen -F runs _uvdock, prints COMPREPLY a line each,
    # and _bash_complete unquotes them (${(Q)...}) before compadd; the same steps here.
    program = (
        f"autoload -U compinit; compinit -u; source {script}; "
        "COMP_WORDS=(uvdock recipe show ''); COMP_CWORD=3; "
        'matches=( ${(f)"$(compgen -F _uvdock -- "")"} ); '
        "printf '%s\\0' ${(Q)matches}"
    )
    proc = subprocess.run(
        ["zsh", "-f", "-c", program],
        capture_output=True,
        text=True,
        cwd=hostile_repo,
        env=_shell_env(tmp_path),
        check=True,
    )
    assert sorted(proc.stdout.split("\0")[:-1]) == sorted(HOSTILE_NAMES)
    _nothing_ran(hostile_repo)


@pytest.mark.skipif(
    shutil.which("fish") is None, reason="fish is not installed (apt-get install fish)"
)
def test_fish_offers_hostile_case_names_as_literal_words(
    run_cli: RunCli, tmp_path: Path, hostile_repo: Path
) -> None:
    script = _script(run_cli, "fish", tmp_path)
    proc = subprocess.run(
        ["fish", "--no-config", "-c", f"source {script}; complete -C 'uvdock recipe show '"],
        capture_output=True,
        text=True,
        cwd=hostile_repo,
        env=_shell_env(tmp_path),
        check=True,
    )
    assert sorted(proc.stdout.splitlines()) == sorted(HOSTILE_NAMES)
    _nothing_ran(hostile_repo)


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@pytest.mark.parametrize(
    "name", [*HOSTILE_NAMES, *CONTROL_NAMES, "new\nline", "back\\slash", "tag\U000e0001x", "é"]
)
def test_a_quoted_word_reads_back_as_the_name_in_the_real_shell(shell: str, name: str) -> None:
    from uvdock.cli.completion import shell_word

    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    word = shell_word(name)
    assert "\n" not in word and "\x1b" not in word
    proc = subprocess.run(
        [shell, "-c", f"printf '%s' {word}"], capture_output=True, check=True, cwd="/"
    )
    assert proc.stdout.decode() == name


def test_bash_offers_hostile_file_names_whole(run_cli: RunCli, tmp_path: Path) -> None:
    script = _script(run_cli, "bash", tmp_path)
    folder = tmp_path / "logs"
    folder.mkdir()
    names = sorted(["a b.log", "*.log", "$(touch pwned).log", "it's.log"])
    for name in names:
        (folder / name).write_text("x\n")
    program = (
        f"source {script}; COMP_WORDS=(uvdock doctor ''); COMP_CWORD=2; _uvdock; "
        "printf '%s\\0' \"${COMPREPLY[@]}\""
    )
    proc = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, cwd=folder, check=True
    )
    assert sorted(proc.stdout.split("\0")[:-1]) == names
    assert not (folder / "pwned").exists()


def test_bash_case_names_come_from_the_repo_named_by_repo(
    run_cli: RunCli, tmp_path: Path, megatron_repo: Path, make_repo: Callable[..., Path]
) -> None:
    script = _script(run_cli, "bash", tmp_path)
    other = make_repo({"README.md": "no recipes here\n"})
    path = _bin_dir(tmp_path)
    # Started in Megatron-LM, completing for another repository: none of Megatron-LM's cases.
    assert (
        _bash_complete(script, f"uvdock --repo {other} recipe show ckpt", megatron_repo, path) == []
    )
    assert (
        _bash_complete(script, f"uvdock --repo={other} recipe show ckpt", megatron_repo, path) == []
    )
    # And the other way round.
    line = f"uvdock --repo {megatron_repo} recipe show ckpt"
    assert _bash_complete(script, line, other, path) == ["ckpt_converter"]


@pytest.mark.skipif(
    shutil.which("fish") is None, reason="fish is not installed (apt-get install fish)"
)
def test_fish_case_names_come_from_the_repo_named_by_repo(
    run_cli: RunCli, tmp_path: Path, megatron_repo: Path, make_repo: Callable[..., Path]
) -> None:
    script = _script(run_cli, "fish", tmp_path)
    other = make_repo({"README.md": "no recipes here\n"})
    env = {**os.environ, "PATH": f"{_bin_dir(tmp_path)}:{os.environ['PATH']}"}

    def complete(line: str, cwd: Path) -> list[str]:
        proc = subprocess.run(
            ["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            check=True,
            cwd=cwd,
            env=env,
        )
        return sorted(row.split("\t")[0] for row in proc.stdout.splitlines())

    assert "ckpt_converter" not in complete(f"uvdock --repo {other} recipe show ", megatron_repo)
    assert "ckpt_converter" in complete(f"uvdock --repo {megatron_repo} recipe show ", other)
