"""Reading a failed `uv lock --check`: stale only in uv's own words."""

from __future__ import annotations

from uvdock.project.lockcheck import Verdict, classify

# uv 0.13.9 in the test image, verbatim.
STALE_0_13 = (
    "Resolved 4 packages in 3ms\n"
    "error: The lockfile at `uv.lock` needs to be updated, but `--check` was provided. "
    "To update the lockfile, run `uv lock`.\n"
)
# Older uv (and the quote) without backticks.
STALE_OLD = "error: The lockfile at uv.lock needs to be updated, but --locked was provided.\n"
NO_PYTHON = (
    "error: Request failed after 3 retries in 6.6s\n"
    "  cause: Failed to download `https://github.com/astral-sh/python-build-standalone/...`\n"
    "  cause: dns error\n"
)


def test_current() -> None:
    assert classify(0, "Resolved 3 packages").verdict is Verdict.CURRENT


def test_stale_in_both_wordings() -> None:
    assert classify(1, STALE_0_13).verdict is Verdict.STALE
    assert classify(1, STALE_OLD).verdict is Verdict.STALE


def test_no_python_download_is_the_environment() -> None:
    result = classify(2, NO_PYTHON)
    assert result.verdict is Verdict.ENVIRONMENT
    assert "Failed to download" in result.cause


def test_anything_else_is_uv_failing() -> None:
    assert classify(2, "error: Failed to parse: `pyproject.toml`\n").verdict is Verdict.FAILED
    assert classify(1, "").verdict is Verdict.FAILED
