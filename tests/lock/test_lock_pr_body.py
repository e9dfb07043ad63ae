"""The uv.lock bump's pull request (lock/pr_body.py) on the real Megatron-LM lock."""

from __future__ import annotations

from pathlib import Path

import pytest
from samples import gfm

from uvdock.config.settings import Config
from uvdock.errors import InputRefused
from uvdock.lock import lockfile, pr_body

MEGATRON_LOCK = Path(__file__).resolve().parents[2] / "examples" / "megatron-lm" / "uv.lock"
OLD_REV = "714dd1a4a980f7937a74343d19a8eba4fe321480"
NEW_REV = "0f5c2f4e1d3b2a8c9e7f6a5b4c3d2e1f0a9b8c7d"


def _set_version(text: str, name: str, old: str, new: str) -> str:
    header = f'[[package]]\nname = "{name}"\nversion = "{old}"\n'
    assert text.count(header) == 1, name
    return text.replace(header, f'[[package]]\nname = "{name}"\nversion = "{new}"\n')


def _diff() -> lockfile.LockDiff:
    base = MEGATRON_LOCK.read_text()
    head = _set_version(base, "torch", "2.13.0", "2.14.0")  # protected: the image provides it
    head = _set_version(head, "accelerate", "1.14.0", "2.0.0")
    head = _set_version(head, "deprecation", "2.1.0", "2.1.1")
    head = _set_version(head, "awkward", "2.13.0", "2.12.3")
    head = head.replace(OLD_REV, NEW_REV)
    return lockfile.diff_locks(base, head)


def test_default_title_is_the_config_default() -> None:
    assert Config().lock_bump_title == pr_body.DEFAULT_TITLE
    title = pr_body.title(pr_body.DEFAULT_TITLE, "main", "2026-12-01")
    assert title == "chore: Bump `uv.lock` (main) (2026-12-01)"


def test_megatron_title_convention_is_configurable() -> None:
    template = "chore(beep boop 🤖): Bump `uv.lock` ({branch}) ({date})"
    assert pr_body.title(template, "dev", "2026-12-01") == (
        "chore(beep boop 🤖): Bump `uv.lock` (dev) (2026-12-01)"
    )


@pytest.mark.parametrize("template", ["Bump ({sha})", "   ", "Bump {branch"])
def test_unknown_placeholders_are_refused(template: str) -> None:
    if template == "Bump {branch":  # not a placeholder at all: kept as written
        assert pr_body.title(template, "main", "d") == "Bump {branch"
        return
    with pytest.raises(InputRefused, match="lock-bump-title"):
        pr_body.title(template, "main", "2026-12-01")


def test_kinds_count_every_move() -> None:
    assert pr_body.kinds(_diff()) == {
        "major": 1, "minor": 1, "patch": 1, "git revision": 1, "downgrade": 1,
    }  # fmt: skip


def test_body_marks_the_packages_the_image_provides() -> None:
    body = pr_body.render(
        _diff(),
        title_text="chore: Bump `uv.lock` (main) (2026-12-01)",
        branch="main",
        upgrade="uv lock --upgrade",
        protected=Config().protected_packages,
    )
    lines = body.splitlines()
    assert lines[0] == "chore: Bump `uv.lock` (main) (2026-12-01)" and lines[1] == ""
    assert "Label: `Run functional tests`" in lines
    assert "| `torch` (base image) | minor | `2.13.0` | `2.14.0` | registry |" in lines
    assert "| `accelerate` | **major** | `1.14.0` | `2.0.0` | registry |" in lines
    assert any(line.startswith("| `awkward` | :warning: **downgrade**") for line in lines)
    assert any("`714dd1a4a980` → `0f5c2f4e1d3b`" in line for line in lines)
    assert "the base image provides `torch` (`protected-packages`)" in body
    items = gfm.task_items(body)
    assert any("Verify the presubmit CI" in item for item in items)
    assert any("/ok to test <commit-sha>" in item for item in items)
    assert any("downgrades" in item for item in items)
    assert "1 major, 1 minor, 1 patch, 1 git revision, 1 downgrade" in body


def test_title_is_one_printable_line() -> None:
    title = pr_body.title(
        "chore: Bump\n`uv.lock`\x1b[2J ({branch})\t({date})", "main", "2026-12-01"
    )
    assert title == "chore: Bump `uv.lock`?[2J (main) (2026-12-01)"


def test_a_backtick_in_the_branch_or_upgrade_stays_in_its_code_span() -> None:
    """A git branch name may hold backticks (git allows them): it cannot end its code span."""
    branch = "bump`<img/src=x>`"
    upgrade = "uv lock --upgrade-package a`b"
    body = pr_body.render(_diff(), title_text="t", branch=branch, upgrade=upgrade)
    spans = [
        child.content
        for token in gfm.tokens(body)
        if token.type == "inline"
        for child in token.children or []
        if child.type == "code_inline"
    ]
    assert branch in spans and upgrade in spans
    assert "<img" not in gfm._PARSER.render(body)
