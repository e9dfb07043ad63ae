"""LTS pins against uv.lock (uvdock.lts.drift)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_all, git

from uvdock.commands.lts.drift import read_lock_source
from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.lts import drift as lts_drift
from uvdock.lts import requirements as lts

LOCK = """version = 1
revision = 2

[[package]]
name = "tqdm"
version = "4.70.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "numpy"
version = "1.26.4"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "numpy"
version = "2.1.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "emerging-optimizers"
version = "0.3.0"
source = { git = "https://github.com/x/y.git?rev=v0.3.0#b309e2f01cda75dc96a6dc1a2355a7b3b64b5e16" }

[[package]]
name = "pinned-by-sha"
version = "1.0.0"
source = { git = "https://github.com/x/z.git?rev=main#abcdef1234567890" }

[[package]]
name = "av"
version = "17.0.1"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "fastapi"
version = "0.100.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "flashinfer-python"
version = "0.6.16.post3"
source = { registry = "https://pypi.org/simple" }
"""

PINS = (
    "tqdm==4.67.3\n"
    "NumPy==1.26.4\n"
    "emerging_optimizers @ git+https://github.com/x/y.git@v0.2.0\n"
    "pinned-by-sha @ git+https://github.com/x/z.git@abcdef1\n"
    "av==17.0.1\n"
    "fastapi==0.136.3\n"
    "flashinfer-python==0.6.11.post3\n"
    "missing==1.0\n"
)


def drifts() -> dict[str, lts_drift.Drift]:
    pins = lts.parse(PINS).pins
    return {d.name: d for d in lts_drift.compare(pins, lts_drift.locked_packages(LOCK, "uv.lock"))}


def test_behind_ahead_same_and_missing() -> None:
    found = drifts()
    assert found["tqdm"] == lts_drift.Drift("tqdm", "4.67.3", "4.70.0", "behind", "minor", 3)
    assert found["NumPy"].status == "behind"  # the newest of the forked versions counts
    assert (found["NumPy"].lock, found["NumPy"].level, found["NumPy"].distance) == (
        "2.1.0",
        "major",
        1,
    )
    assert found["av"].status == "same"
    assert found["fastapi"].detail == "ahead (36 minor)"
    assert found["flashinfer-python"].detail == "behind (5 patch)"
    assert found["missing"].status == "not in lock" and found["missing"].lock is None


def test_git_refs_are_compared_by_ref_and_commit() -> None:
    found = drifts()
    optimizers = found["emerging_optimizers"]
    assert (optimizers.lts, optimizers.lock, optimizers.detail) == (
        "v0.2.0",
        "0.3.0 (v0.3.0)",
        "behind (1 minor)",
    )
    assert found["pinned-by-sha"].status == "same"  # the LTS ref is a prefix of the locked commit


def test_post_release_level() -> None:
    pins = lts.parse("a==1.0\n").pins
    lock = 'version = 1\n\n[[package]]\nname = "a"\nversion = "1.0.post1"\n'
    (drift,) = lts_drift.compare(pins, lts_drift.locked_packages(lock, "x"))
    assert drift.detail == "behind (pre/post/local)"


def test_a_lock_with_conflict_markers_is_unusable() -> None:
    with pytest.raises(EnvironmentUnusable) as info:
        lts_drift.locked_packages("<<<<<<< ours\n" + LOCK, "uv.lock")
    assert info.value.hint is not None and "lock resolve" in info.value.hint


def test_source_defaults_to_the_base_ref_then_the_working_tree(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo({"uv.lock": LOCK})
    (repo / "uv.lock").write_text(LOCK.replace("4.70.0", "9.9.9"))
    source = read_lock_source(repo, "origin/main")
    assert source.description == "uv.lock (working tree)"  # no origin/main yet
    assert "9.9.9" in source.text
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    source = read_lock_source(repo, "origin/main")
    assert source.description == "origin/main:uv.lock"
    assert "4.70.0" in source.text and "9.9.9" not in source.text
    assert "9.9.9" in read_lock_source(repo, "origin/main", working_tree=True).text


def test_missing_locks(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"README": "x"})
    with pytest.raises(EnvironmentUnusable, match=r"no uv\.lock"):
        read_lock_source(repo, "origin/main")
    with pytest.raises(InputRefused, match="no such file"):
        read_lock_source(repo, "origin/main", lock_path=tmp_path / "nope.lock")
    (repo / "other.lock").write_text(LOCK)
    commit_all(repo)
    source = read_lock_source(repo, "origin/main", lock_path=repo / "other.lock")
    assert source.description.endswith("other.lock")
