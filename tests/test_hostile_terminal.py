"""Control sequences from repository files and logs never reach the terminal raw.

A table of surfaces (every command that shows file or log text) x sequences (OSC 0 / 8 / 52
with BEL or ST, DCS, CSI, a C1 CSI, C0 controls, bidi controls): each surface runs on a real
git repository whose files carry the sequence, and what it prints holds only the visible
escape (`\\x1b`, `\\u202e`), never the character.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import MEGATRON_LM, CliResult, RunCli, commit_all, git, init_repo

from uvdock.ui.terminal_text import escape

SEQUENCES = {
    "osc0-bel": "\x1b]0;uvdock-pwned\x07",
    "osc8-st": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "osc52-bel": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "osc52-st": "\x1b]52;c;cm0gLXJmIH4K\x1b\\",
    "dcs-st": '\x1bP$q"p\x1b\\',
    "csi": "\x1b[2J\x1b[1;1H",
    "c1-csi": "\x9b2J\x9d0;t\x9c",
    "c0": "\x07\x08\x0e\x7f",
    "bidi": "\u202eevil\u202c\u2066x\u2069\u200f",
}
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _megatron(tmp_path: Path) -> Path:
    repo = tmp_path / "megatron-lm"
    shutil.copytree(MEGATRON_LM, repo, ignore=shutil.ignore_patterns("NOTICE.md"))
    for path in repo.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    init_repo(repo)
    return repo


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _pins_repo(tmp_path: Path, seq: str) -> Path:
    """The dev pin file holds the sequence; a Dockerfile is named with it too."""
    repo = _megatron(tmp_path)
    (repo / "docker" / ".ngc_version.dev").write_text(f"26.05-py3{seq}\n")
    name = "Dockerfile." + seq.replace("/", "_")
    (repo / "docker" / name).write_text("FROM nvcr.io/nvidia/pytorch:25.01-py3\n")
    commit_all(repo, "hostile pins")
    return repo


def image_show(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    return run_cli("--repo", _pins_repo(tmp_path, seq), "image", "show")


def image_check(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    return run_cli("--repo", _pins_repo(tmp_path, seq), "image", "check")


def image_check_github(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    return run_cli("--repo", _pins_repo(tmp_path, seq), "image", "check", "--format", "github")


def image_check_gitlab(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    return run_cli("--repo", _pins_repo(tmp_path, seq), "image", "check", "--format", "gitlab")


def bump_diff(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    repo = _megatron(tmp_path)
    dockerfile = repo / "docker" / "Dockerfile.ci.dev"
    _edit(dockerfile, "\nARG FROM_IMAGE_NAME=", f"\n# base {seq}\nARG FROM_IMAGE_NAME=")
    commit_all(repo, "hostile comment")
    return run_cli("--repo", repo, "--dry-run", "image", "bump", "26.07-py3", "--offline")


def lts_show(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    repo = _megatron(tmp_path)
    _edit(repo / "docker/lts/requirements.txt", "einops==0.8.2", f"einops==0.8.2  # {seq}")
    commit_all(repo, "hostile comment")
    return run_cli("--repo", repo, "lts", "show")


def _hostile_lock(tmp_path: Path, seq: str) -> Path:
    repo = _megatron(tmp_path)
    commit_all(repo, "base")
    lock = repo / "uv.lock"
    text = re.sub(
        r'(name = "einops"\nversion = ")([^"]*)"',
        lambda m: f'{m[1]}{m[2]}{seq}"',
        lock.read_text(),
        count=1,
    )
    lock.write_text(text)
    commit_all(repo, "hostile version")
    return repo


def lock_diff(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    return run_cli("--repo", _hostile_lock(tmp_path, seq), "lock", "diff", "HEAD~1", "HEAD")


def lock_diff_markdown(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    repo = _hostile_lock(tmp_path, seq)
    return run_cli("--repo", repo, "lock", "diff", "HEAD~1", "HEAD", "--format", "markdown")


def _log(tmp_path: Path, seq: str, lines: list[str]) -> Path:
    log = tmp_path / "ci.log"
    log.write_text("".join(f"{line}\n" for line in lines).replace("SEQ", seq))
    return log


def doctor_finding(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    log = _log(tmp_path, seq, ["step 1", "No space left on device SEQ while writing"])
    return run_cli("doctor", log)


def doctor_error_lines(run_cli: RunCli, tmp_path: Path, seq: str) -> CliResult:
    return run_cli("doctor", _log(tmp_path, seq, ["ok", "ERROR: something SEQ broke"]))


Surface = Callable[[RunCli, Path, str], CliResult]
SURFACES: dict[str, Surface] = {
    "image-show": image_show,
    "image-check": image_check,
    "image-check-github": image_check_github,
    "image-check-gitlab": image_check_gitlab,
    "image-bump-diff": bump_diff,
    "lts-show": lts_show,
    "lock-diff": lock_diff,
    "lock-diff-markdown": lock_diff_markdown,
    "doctor-finding": doctor_finding,
    "doctor-error-lines": doctor_error_lines,
}


@pytest.mark.parametrize("seq_name", SEQUENCES)
@pytest.mark.parametrize("surface", SURFACES)
def test_no_raw_control_sequence_reaches_the_terminal(
    surface: str, seq_name: str, run_cli: RunCli, tmp_path: Path
) -> None:
    seq = SEQUENCES[seq_name]
    result = SURFACES[surface](run_cli, tmp_path, seq)
    assert result.code in (0, 1, 2), result.err  # a refusal quotes the file too
    shown = result.out + result.err
    assert not RAW.findall(shown), [line for line in shown.splitlines() if RAW.search(line)]
    # Shown, not dropped: the reader sees that the file holds something odd. (JSON has its
    # own escapes, \u001b; doctor removes the colour and title codes CI logs are full of.)
    if surface != "image-check-gitlab" and not surface.startswith("doctor"):
        visible = escape(seq.replace("/", "_") if surface == "image-show" else seq)
        assert any(part in shown for part in re.findall(r"\\[xu][0-9a-f]+", visible))


def test_json_stays_as_it_is(run_cli: RunCli, tmp_path: Path) -> None:
    import json

    seq = SEQUENCES["osc52-bel"]
    result = run_cli("--json", "--repo", _pins_repo(tmp_path, seq), "image", "show")
    assert escape(result.out) == result.out  # the JSON encoder escapes control characters
    values = json.dumps(json.loads(result.out))
    assert json.dumps(seq)[1:-1] in values  # the value is the file's, not uvdock's escape


def test_lock_resolve_names_other_unmerged_files_escaped(
    run_cli: RunCli, tmp_path: Path, wheelhouse: Path
) -> None:
    from samples.lock_conflicts import make_conflict

    conflict = make_conflict(tmp_path, wheelhouse, "merge")
    repo = conflict.repo
    git(repo, "merge", "--abort")
    name = "notes" + SEQUENCES["osc0-bel"] + SEQUENCES["bidi"] + ".txt"
    for branch, text in (("main", "main\n"), ("feature", "feature\n")):
        git(repo, "checkout", "-q", branch)
        (repo / name).write_text(text)
        commit_all(repo, f"{branch}: notes")
    git(repo, "merge", "--no-edit", "main", check=False)
    assert git(repo, "ls-files", "-u", "uv.lock")
    result = run_cli("--repo", repo, "--engine", "local", "lock", "resolve", "--onto", "main")
    assert result.code == 0, result.err
    assert "still unmerged" in result.out
    assert not RAW.findall(result.out + result.err)
    assert "notes\\x1b]0;uvdock-pwned\\x07\\u202e" in result.out


@pytest.mark.parametrize("seq_name", SEQUENCES)
def test_escape_keeps_lines_tabs_and_crlf(seq_name: str) -> None:
    text = f"a\tb{SEQUENCES[seq_name]}\r\nc\rd\n"
    shown = escape(text)
    assert RAW.findall(shown) == ["\r"]  # the CR of the CRLF, which only ends a line
    assert shown.startswith("a\tb") and "\r\nc\\x0dd\n" in shown
