"""Issue 29, item 5: no decision parses a message git may have translated.

With the repository owned by another user, git refuses it (safe.directory) in the user's
language: under `LANGUAGE=de LANG=C.UTF-8` it says "unsichere Besitzverhältnisse", not
"dubious ownership". uvdock's refusal must not depend on which.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import RunCli

GERMAN = Path("/usr/share/locale/de/LC_MESSAGES/git.mo")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand a repository to another user"),
    pytest.mark.skipif(
        not GERMAN.exists(), reason=f"no {GERMAN}: git's translations (run .ci/engine-setup)"
    ),
]


@pytest.fixture
def german(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.setenv("LANGUAGE", "de")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _hand_over(repo: Path) -> None:
    for path in [repo, *repo.rglob("*")]:
        os.lchown(path, 54321, 54321)


@pytest.mark.usefixtures("german")
@pytest.mark.parametrize(
    "command",
    [("image", "bump", "26.08-py3", "--offline"), ("merge-driver", "install")],
    ids=["image-bump", "merge-driver"],
)
def test_another_users_repository_is_refused_in_any_language(
    command: tuple[str, ...], megatron_repo: Path, run_cli: RunCli
) -> None:
    _hand_over(megatron_repo)
    said = subprocess.run(
        ["git", "-C", str(megatron_repo), "status"], capture_output=True, text=True
    ).stderr
    assert "dubious ownership" not in said, "git did not speak German: the test proves nothing"
    before = {p: p.read_bytes() for p in megatron_repo.rglob("*") if p.is_file()}
    result = run_cli("--repo", megatron_repo, *command)
    assert result.code == 3, result.out + result.err
    assert "safe.directory" in result.err and "uid 54321" in result.err
    assert {p: p.read_bytes() for p in megatron_repo.rglob("*") if p.is_file()} == before


@pytest.mark.usefixtures("german")
def test_mounting_another_users_repository_is_refused_in_any_language(
    megatron_repo: Path, run_cli: RunCli, engine_image: str
) -> None:
    _hand_over(megatron_repo)
    argv = ("--repo", megatron_repo, "--engine", "podman", "--image", engine_image)
    result = run_cli(*argv, "run", "true")
    assert result.code == 3, result.out + result.err
    assert "safe.directory" in result.err
