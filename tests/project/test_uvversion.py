"""The one uv version parser and the one `[tool.uv] required-version` rule (used by the
uv-running commands and by doctor alike)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from samples.projects import pyproject_requiring_uv

from uvdock.project import pyproject, uvversion


@pytest.mark.parametrize(
    ("output", "version"),
    [
        # What `uv --version` printed across releases and builds.
        ("uv 0.1.4\n", "0.1.4"),  # early releases: the bare version
        ("uv 0.4.18 (Homebrew 2024-10-02)\n", "0.4.18"),  # a distribution's build
        ("uv 0.7.8 (0ddcc1905 2025-05-23)\n", "0.7.8"),  # release builds: commit and date
        ("uv 0.13.9 (x86_64-unknown-linux-gnu)\n", "0.13.9"),  # the test image's uv
        ("uv 0.7.2 (x86_64-unknown-linux-gnu)", "0.7.2"),
        ("uv 0.8.0rc1\n", "0.8.0rc1"),
        ("uv 0.9\n", "0.9"),
        ("bash: uv: command not found", None),
        ("uvx 0.5.0\n", None),
        ("", None),
    ],
)
def test_parse(output: str, version: str | None) -> None:
    assert uvversion.parse(output) == version


def test_parse_real_uv() -> None:
    import subprocess

    out = subprocess.run(["uv", "--version"], capture_output=True, text=True, check=True).stdout
    found = uvversion.parse(out)
    assert found is not None and found[0].isdigit() and found in out


def test_mismatches() -> None:
    assert uvversion.mismatches("0.7.2", "==0.7.2", "0.7.2") == []
    problems = uvversion.mismatches("0.7.2", ">=0.8", "0.13.9")
    assert len(problems) == 2
    assert "required-version >=0.8" in problems[0]
    assert "host's uv is 0.13.9" in problems[1]
    assert "not a valid specifier" in uvversion.mismatches("0.7.2", ">=banana", None)[0]


@pytest.mark.parametrize(
    ("version", "required", "ok"),
    [
        ("0.13.9", ">=0.13", True),
        ("0.13.9", "==0.7.2", False),
        ("0.7.2", "0.7.2", True),  # uv takes a bare version as ==
        ("0.7.3", "0.7.2", False),
        ("0.8.0rc1", ">=0.7", True),
        ("0.7.2", "not a spec", False),
        ("weird", ">=0.1", False),
    ],
)
def test_satisfies(version: str, required: str, ok: bool) -> None:
    assert uvversion.satisfies(version, required) is ok
    # The commands' warning and doctor's check apply the same rule.
    warned = any("does not satisfy" in p for p in uvversion.mismatches(version, required, None))
    assert warned is (not ok and uvversion.required_specifier(required) is not None)


@pytest.mark.parametrize(
    ("text", "required"),
    [
        (pyproject_requiring_uv("==0.7.2"), "==0.7.2"),
        ("[project]\nname='x'\n", None),
        ("not [toml", None),
        ("[tool]\nuv = 'a string'\n", None),
        ("[tool.uv]\nrequired-version = 7\n", None),
    ],
)
def test_required_uv_version(
    make_repo: Callable[..., Path], text: str, required: str | None
) -> None:
    assert pyproject.required_uv_version(make_repo({"pyproject.toml": text})) == required


def test_required_uv_version_without_pyproject(tmp_path: Path) -> None:
    assert pyproject.required_uv_version(tmp_path) is None
