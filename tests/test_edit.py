"""Edits keep every untouched byte, write atomically, and apply all files or none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from uvdock import edit
from uvdock.errors import EnvironmentUnusable


def test_read_text_keeps_crlf_and_missing_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a\r\nb")
    assert edit.read_text(path) == "a\r\nb"


def test_apply_writes_exact_bytes_and_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_bytes(b"#!/bin/sh\r\necho old\r\n")
    path.chmod(0o750)
    old = edit.read_text(path)
    written = edit.apply([edit.FileEdit(path, old, old.replace("old", "new"))])
    assert [e.path for e in written] == [path]
    assert path.read_bytes() == b"#!/bin/sh\r\necho new\r\n"
    assert path.stat().st_mode & 0o777 == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script.sh"]  # no temp file left


def test_unchanged_edit_does_not_touch_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("same\n")
    before = path.stat().st_mtime_ns
    assert edit.apply([edit.FileEdit(path, "same\n", "same\n")]) == []
    assert path.stat().st_mtime_ns == before


def test_failure_midway_restores_files_already_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.write_bytes(b"a-old\n")
    second.write_bytes(b"b-old\n")
    real_replace = os.replace
    calls = {"n": 0}

    def flaky_replace(src: str | Path, dst: str | Path) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the second file's swap fails
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr("uvdock.edit.os.replace", flaky_replace)
    edits = [
        edit.FileEdit(first, "a-old\n", "a-new\n"),
        edit.FileEdit(second, "b-old\n", "b-new\n"),
    ]
    with pytest.raises(EnvironmentUnusable, match="b: cannot replace: disk full"):
        edit.apply(edits)
    monkeypatch.setattr("uvdock.edit.os.replace", real_replace)
    assert first.read_bytes() == b"a-old\n"
    assert second.read_bytes() == b"b-old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_diff_names_the_display_path(tmp_path: Path) -> None:
    change = edit.FileEdit(tmp_path / "x", "one\n", "two\n", display="docker/x")
    assert change.diff().splitlines()[:2] == ["--- a/docker/x", "+++ b/docker/x"]
    assert "-one" in change.diff() and "+two" in change.diff()


def test_a_new_file_gets_the_umask_mode_not_mkstemps_0600(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    old_umask = os.umask(0o022)
    try:
        edit.atomic_write(target, "x\n")
    finally:
        os.umask(old_umask)
    assert target.stat().st_mode & 0o777 == 0o644
    assert target.read_bytes() == b"x\n"


def test_a_file_that_is_not_utf8_is_refused_not_a_crash(tmp_path: Path) -> None:
    from uvdock.errors import InputRefused

    path = tmp_path / "latin1.txt"
    path.write_bytes(b"caf\xe9\n")
    with pytest.raises(InputRefused, match="not UTF-8"):
        edit.read_text(path)
