"""The pyproject.toml merge on replayed Megatron-LM merges (tests/data/pyproject-merges):
the result is byte for byte what the maintainers committed, by the library (with git's
real `git merge-file -p` output passed in) and by the merge driver in a real `git merge`."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, diverged, git

from uvdock.merge.pyproject import merge_pyproject
from uvdock.merge.report import report
from uvdock.merge.textual import MARKER_SIZE, Textual

CASES = Path(__file__).resolve().parents[1] / "data" / "pyproject-merges"
NAMES = sorted(p.name for p in CASES.iterdir() if p.is_dir())
SIDES = ("base", "ours", "theirs", "expected")


def case(name: str) -> dict[str, str]:
    return {side: (CASES / name / f"{side}.toml").read_text(encoding="utf-8") for side in SIDES}


def git_textual(tmp_path: Path, texts: dict[str, str]) -> Textual:
    files = []
    for side in ("ours", "base", "theirs"):
        (tmp_path / side).write_bytes(texts[side].encode("utf-8"))
        files.append(str(tmp_path / side))
    done = subprocess.run(
        ["git", "merge-file", "-p", "--diff3", f"--marker-size={MARKER_SIZE}", *files],
        capture_output=True,
        check=False,
    )  # bytes: CRLF stays CRLF
    return Textual(done.stdout.decode("utf-8"), done.returncode == 0)


def test_every_class_is_shipped() -> None:
    assert len(NAMES) >= 8


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("name", NAMES)
def test_merge_is_what_was_committed(name: str, newline: str, tmp_path: Path) -> None:
    texts = {side: text.replace("\n", newline) for side, text in case(name).items()}
    result = merge_pyproject(
        texts["base"], texts["ours"], texts["theirs"], git_textual(tmp_path, texts)
    )
    assert result.conflicts == ()
    assert result.text == texts["expected"]


@pytest.mark.parametrize("name", NAMES)
def test_merge_driver_in_a_real_git_merge(
    name: str, make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    texts = case(name)
    repo = diverged(make_repo, texts["base"], texts["ours"], texts["theirs"])
    assert run_cli("--repo", repo, "merge-driver", "install", "--pyproject").code == 0
    git(repo, "merge", "--no-edit", "theirs")
    assert (repo / "pyproject.toml").read_text(encoding="utf-8") == texts["expected"]
    assert git(repo, "status", "--porcelain") == ""


def test_the_removal_is_said_in_words(tmp_path: Path) -> None:
    texts = case("removal-taken")
    result = merge_pyproject(
        texts["base"], texts["ours"], texts["theirs"], git_textual(tmp_path, texts)
    )
    decisions = report(result)["decisions"]
    assert decisions[0] == "theirs removed tqdm from project.optional-dependencies.dev"
    assert "ours added protobuf<6 to tool.uv.override-dependencies" in decisions
    assert report(result)["via"] == "git"


def test_set_like_uv_list_takes_the_union_in_both_layouts(tmp_path: Path) -> None:
    texts = case("no-build-isolation-both-add")
    result = merge_pyproject(
        texts["base"], texts["ours"], texts["theirs"], git_textual(tmp_path, texts)
    )
    assert result.via == "git-hunks"
    assert {(t.side, t.entry) for t in result.taken} == {
        ("ours", "flash-attn"),
        ("theirs", "nv-grouped-gemm"),
    }
    # Without git's text the structured merge alone reaches the same bytes here.
    alone = merge_pyproject(texts["base"], texts["ours"], texts["theirs"])
    assert alone.text == texts["expected"] and alone.via == "uvdock"


def test_a_pin_change_next_to_an_added_commented_entry_keeps_both(tmp_path: Path) -> None:
    # git refuses changes on adjacent lines; both sides' line changes fit the base lines.
    texts = case("pin-next-to-commented-entry")
    textual = git_textual(tmp_path, texts)
    assert not textual.clean
    result = merge_pyproject(texts["base"], texts["ours"], texts["theirs"], textual)
    assert result.via == "git-hunks"
    assert "    # async fixtures for the inference server tests\n" in (result.text or "")


def test_a_hunk_is_never_resolved_by_repeating_a_comment_both_sides_kept() -> None:
    from uvdock.merge.textual import resolve_hunks

    # Both sides added a line under a comment both kept: stacking the two sides reads as
    # the same data (a comment is no data) but would repeat the comment.
    hunk = ("# pinned\ny = 2\n", "# pinned\n", "# pinned\nz = 3\n")
    assert resolve_hunks(["x = 1\n", hunk, ""], {"x": 1, "y": 2, "z": 3}) is None
