"""Edits keep every untouched byte, write atomically, and apply all files or none."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st

from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.files import edit


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

    monkeypatch.setattr("uvdock.files.edit.os.replace", flaky_replace)
    edits = [
        edit.FileEdit(first, "a-old\n", "a-new\n"),
        edit.FileEdit(second, "b-old\n", "b-new\n"),
    ]
    with pytest.raises(EnvironmentUnusable, match="b: cannot replace: disk full"):
        edit.apply(edits)
    monkeypatch.setattr("uvdock.files.edit.os.replace", real_replace)
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


# -- diffs that apply --------------------------------------------------------------------

TEXTS = [
    "a\nb\nc\n",
    "a\nb\nc",
    "a\r\nb\r\nc\r\n",
    "a\r\nb\r\nc",
    "only",
    "",
    "\ufeffbom\nline\n",
    "x\x1cy\nform\x0cfeed\nz",  # characters str.splitlines would cut at
]


def _git_apply(tmp_path: Path, old: str, new: str) -> bytes:
    """Apply FileEdit.diff() with `git apply` to a copy holding `old`; the resulting bytes."""
    folder = tmp_path / "copy"
    folder.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    target = folder / "f.txt"
    target.write_bytes(old.encode())
    patch = edit.FileEdit(target, old, new, display="f.txt").diff()
    for args in (["--check"], []):
        done = subprocess.run(
            ["git", "-C", str(folder), "apply", "--whitespace=nowarn", *args],
            input=patch.encode(),
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, (patch, done.stderr)
    return target.read_bytes()


@pytest.mark.parametrize("old", TEXTS)
@pytest.mark.parametrize("new", TEXTS)
def test_every_diff_applies_and_gives_the_exact_bytes(old: str, new: str, tmp_path: Path) -> None:
    if old == new or not old:
        return  # no diff; creating a file is not an edit uvdock makes through a diff
    assert _git_apply(tmp_path, old, new) == new.encode()


def test_missing_final_newline_is_marked_like_git(tmp_path: Path) -> None:
    change = edit.FileEdit(tmp_path / "x", "26.04-py3", "26.06-py3", display="pin")
    assert change.diff().splitlines()[-4:] == [
        "-26.04-py3",
        "\\ No newline at end of file",
        "+26.06-py3",
        "\\ No newline at end of file",
    ]


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(
    old=st.lists(st.sampled_from(["a", "b", "c\r", "", "d e"]), max_size=6),
    new=st.lists(st.sampled_from(["a", "b", "x\r", "", "d e"]), max_size=6),
    old_final=st.booleans(),
    new_final=st.booleans(),
)
def test_generated_diffs_apply(
    old: list[str], new: list[str], old_final: bool, new_final: bool, tmp_path_factory: Any
) -> None:
    old_text = "\n".join(old) + ("\n" if old_final and old else "")
    new_text = "\n".join(new) + ("\n" if new_final and new else "")
    if old_text == new_text or not old_text:
        return
    folder = tmp_path_factory.mktemp("apply")
    assert _git_apply(folder, old_text, new_text) == new_text.encode()


# -- where and how files are written ----------------------------------------------------


def test_a_symlinked_file_is_edited_through_the_link_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "docker" / "real.txt"
    real.parent.mkdir()
    real.write_bytes(b"old\n")
    link = tmp_path / "link.txt"
    link.symlink_to("docker/real.txt")
    edit.apply([edit.FileEdit(link, "old\n", "new\n")])
    assert link.is_symlink() and os.readlink(link) == "docker/real.txt"
    assert real.read_bytes() == b"new\n"
    edit.atomic_write_bytes(link, b"again\n")
    assert link.is_symlink() and real.read_bytes() == b"again\n"


def test_confined_writes_refuse_targets_outside(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    victim = outside / "victim"
    victim.write_bytes(b"keep\n")
    (repo / "link").symlink_to(victim)
    (repo / "dir").symlink_to(outside, target_is_directory=True)
    inside = repo / "ok"
    inside.write_bytes(b"old\n")
    with edit.confined(repo):
        for path in (
            victim,
            repo / "link",
            repo / "dir" / "victim",
            repo / ".." / "outside/victim",
        ):
            with pytest.raises(InputRefused, match="outside the repository"):
                edit.apply(
                    [edit.FileEdit(inside, "old\n", "new\n"), edit.FileEdit(path, "keep\n", "x")]
                )
        with pytest.raises(InputRefused):
            edit.atomic_write_bytes(repo / "link", b"x")
    assert victim.read_bytes() == b"keep\n"
    assert inside.read_bytes() == b"old\n"  # all or nothing: the refusal came first
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_root_editing_another_users_file_keeps_owner_group_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "pin"
    path.write_bytes(b"\xef\xbb\xbfnvcr.io/nvidia/pytorch:26.04-py3\n")
    os.chown(path, 1234, 4321)
    path.chmod(0o664)
    old = edit.read_text(path)
    assert old.startswith("\ufeff")  # the BOM is text like any other: kept
    edit.apply([edit.FileEdit(path, old, old.replace("26.04", "26.06"))])
    info = path.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o7777) == (1234, 4321, 0o664)
    assert path.read_bytes() == b"\xef\xbb\xbfnvcr.io/nvidia/pytorch:26.06-py3\n"


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".uvdock"))


def test_a_full_disk_is_exit_3_naming_the_path_and_leaves_no_temp_file(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes a real write fail with EFBIG (Python ignores SIGXFSZ)."""
    path = tmp_path / "uv.lock"
    path.write_bytes(b"small\n")
    script = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from uvdock.files import edit\n"
        "from uvdock.errors import EnvironmentUnusable\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "try:\n"
        f"    edit.atomic_write_bytes(Path({str(path)!r}), b'x' * 100000)\n"
        "except EnvironmentUnusable as exc:\n"
        "    print(exc.exit_code, exc.message)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.startswith(f"3 {path}: cannot write: File too large"), done
    assert path.read_bytes() == b"small\n"
    assert _leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="chattr +i needs root")
def test_an_immutable_file_is_exit_3_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "pin"
    path.write_bytes(b"old\n")
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("this filesystem has no immutable attribute")
    try:
        with pytest.raises(
            EnvironmentUnusable, match="pin: cannot replace: Operation not permitted"
        ):
            edit.apply([edit.FileEdit(path, "old\n", "new\n")])
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    assert path.read_bytes() == b"old\n"
    assert _leftovers(tmp_path) == []


def test_a_read_only_folder_is_exit_3(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "f"
    path.write_bytes(b"old\n")
    if os.geteuid() == 0:
        mounted = subprocess.run(
            ["mount", "--bind", "-o", "ro", str(folder), str(folder)], capture_output=True
        )
        if mounted.returncode != 0:
            pytest.skip("root cannot bind-mount read-only here")
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
    else:
        folder.chmod(0o555)
    try:
        with pytest.raises(EnvironmentUnusable, match="f: cannot write: "):
            edit.apply([edit.FileEdit(path, "old\n", "new\n")])
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(folder)], check=True)
        folder.chmod(0o755)
    assert path.read_bytes() == b"old\n"
    assert _leftovers(folder) == []


def test_a_committed_file_named_like_a_leftover_with_no_possible_pid_is_kept(
    tmp_path: Path,
) -> None:
    """A cloned repository may hold any name: a "pid" too large for kill() is nobody's."""
    hostile = tmp_path / ".f.99999999999999999999.abcdefgh.uvdock"
    hostile.write_bytes(b"theirs\n")
    path = tmp_path / "pin"
    with edit.confined(tmp_path):
        edit.atomic_write_bytes(path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert hostile.read_bytes() == b"theirs\n"
