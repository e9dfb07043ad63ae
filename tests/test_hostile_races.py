"""One writer at a time: the races of issue 12 §3, each in a loop of real processes."""

from __future__ import annotations

from pathlib import Path

from samples import races

ROUNDS = 4


def _assert_all_ok(outcomes: list[races.Outcome]) -> None:
    bad = [o for o in outcomes if not o.ok]
    assert not bad, bad


def test_two_mark_broken_on_one_file_lose_no_mark(tmp_path: Path) -> None:
    _assert_all_ok(races.mark_broken_race(tmp_path, ROUNDS))


def test_dev_and_lts_bumps_together_lose_no_lane(tmp_path: Path) -> None:
    _assert_all_ok(races.bump_race(tmp_path, ROUNDS))


def test_two_lock_resolves_together_neither_crashes(tmp_path: Path, wheelhouse: Path) -> None:
    _assert_all_ok(races.resolve_race(tmp_path, wheelhouse, 2))
