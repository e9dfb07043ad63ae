"""--dry-run diffs apply with `git apply` and give exactly the real run's bytes (issue 13 §4).

Each case copies one repository twice: the dry run's diff is applied to one copy with
`git apply` (after `--check`), the real command runs in the other, and every file must be
byte-identical. Files with and without a final newline, and CRLF files.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, git, init_repo
from samples.pins import pin_files
from samples.recipes import MODEL, OTHER, RECIPES

LTS_REQ = "docker/lts/requirements.txt"
REQUIREMENTS = "# LTS pins\neinops==0.8.2\ndatasets==4.8.5  # keep\ntqdm==4.66.0\n"


def _variant(text: str, ending: str, final: bool) -> str:
    body = text.rstrip("\n").replace("\n", ending)
    return body + (ending if final else "")


VARIANTS = [("\n", True), ("\n", False), ("\r\n", True), ("\r\n", False)]
IDS = ["lf", "lf-no-final-newline", "crlf", "crlf-no-final-newline"]


def _files(ending: str, final: bool) -> dict[str, str]:
    files = {k: str(v) for k, v in pin_files().items()}
    files = {k: _variant(v, ending, final) for k, v in files.items()}
    files[LTS_REQ] = _variant(REQUIREMENTS, ending, final)
    files[f"{RECIPES}/a/model.yaml"] = _variant(MODEL, ending, final)
    files[f"{RECIPES}/b/other.yaml"] = _variant(OTHER, ending, final)
    return files


def _tree(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }


COMMANDS = {
    "image bump": ("image", "bump", "26.09-py3"),
    "image bump --lts": ("image", "bump", "26.09-py3", "--lts"),
    "lts pin": ("lts", "pin", "einops==0.9.0", "tqdm==4.67.1", "--lts"),
    "recipe mark-broken": ("recipe", "mark-broken", "alpha", "--issue", "3", "--reason", "hangs"),
}


@pytest.mark.parametrize(("ending", "final"), VARIANTS, ids=IDS)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_dry_run_diff_applies_to_exactly_the_real_bytes(
    command: str,
    ending: str,
    final: bool,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")
    real = make_repo(_files(ending, final))
    planned = tmp_path / "planned"
    shutil.copytree(real, planned)
    dry = run_cli("--repo", planned, "--dry-run", *COMMANDS[command])
    assert dry.code == 0, dry.err
    assert _tree(planned) == _tree(real)  # a dry run writes nothing
    patch = dry.out[dry.out.index("--- a/") :]
    patch = patch[: _patch_end(patch)]
    for check in (["--check"], []):
        applied = subprocess.run(
            ["git", "-C", str(planned), "apply", "--whitespace=nowarn", *check],
            input=patch.encode(),
            capture_output=True,
            check=False,
        )
        assert applied.returncode == 0, (patch, applied.stderr)
    done = run_cli("--repo", real, *COMMANDS[command])
    assert done.code == 0, done.err
    assert _tree(planned) == _tree(real)
    assert git(real, "status", "--porcelain")  # the real run did change something


def _patch_end(text: str) -> int:
    """Where the diff ends: the first line that belongs to no diff (the command's report)."""
    offset = 0
    for line in text.splitlines(keepends=True):
        if not line.startswith(("--- ", "+++ ", "@@ ", " ", "-", "+", "\\")):
            return offset
        offset += len(line)
    return offset


def test_the_dev_branch_pin_file_without_final_newline(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docker/.ngc_version.dev on Megatron-LM's dev branch has no final newline."""
    repo = init_repo(tmp_path / "r")
    for rel, text in pin_files(dev_pin="nvcr.io/nvidia/pytorch:26.04-py3").items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(str(text))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")
    dry = run_cli("--repo", repo, "--dry-run", "image", "bump", "26.09-py3")
    assert dry.code == 0, dry.err
    assert "-nvcr.io/nvidia/pytorch:26.04-py3\n\\ No newline at end of file\n" in dry.out
