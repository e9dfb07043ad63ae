"""Issue 29, item 9: uvdock acts on exactly the repository git acts on, or refuses.

GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE are read by git relative to its working folder;
uvdock runs git with `-C REPO`, so a relative value must not name another repository. A
`.git` file is resolved through git before uvdock creates its lock where it points.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from conftest import git

PYPROJECT = '[project]\nname = "demo"\nversion = "0.1.0"\n'


def _uvdock(cwd: Path, env: dict[str, str], *words: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("UVDOCK_", "GIT_DIR"))}
    return subprocess.run(
        [sys.executable, "-m", "uvdock", *words],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_relative_git_variables_name_the_repository_git_sees(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo({"pyproject.toml": PYPROJECT, "sub/README": "x\n"})
    env = {"GIT_DIR": "../.git", "GIT_WORK_TREE": ".."}
    assert git(repo / "sub", "rev-parse", "--show-toplevel")  # git itself is content
    done = _uvdock(repo / "sub", env, "merge-driver", "install")
    assert done.returncode == 0, done.stderr
    assert "uvdock" in git(repo, "config", "--get", "merge.uvdock-lock.driver")
    assert (repo / ".git" / "info" / "attributes").read_text() == "uv.lock merge=uvdock-lock\n"
    assert not (repo.parent / ".git").exists() and not (repo.parent / "uvdock").exists()


def test_a_relative_index_file_is_read_as_git_reads_it(megatron_repo: Path) -> None:
    """git takes GIT_INDEX_FILE from the work tree's top, not from where it was started:
    an index that tracks a pin file the work tree lacks makes it a tracked-but-absent one."""
    repo = megatron_repo
    (repo / "sub").mkdir()
    git(repo, "read-tree", f"--index-output={repo / '.git' / 'alt'}", "HEAD")
    git(repo, "rm", "-q", "--cached", "docker/.ngc_version.dev")  # the usual index: untracked
    (repo / "docker" / ".ngc_version.dev").unlink()
    env = {"GIT_INDEX_FILE": ".git/alt"}
    seen = subprocess.run(
        ["git", "ls-files", "../docker/.ngc_version.dev"],
        cwd=repo / "sub", env={**os.environ, **env}, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert seen.strip() == "../docker/.ngc_version.dev"  # git, from sub/, uses the alt index
    done = _uvdock(repo / "sub", env, "image", "check")
    assert "docker/.ngc_version.dev: tracked by git but absent" in done.stdout + done.stderr


def test_a_repo_outside_the_forced_work_tree_is_refused(make_repo: Callable[..., Path]) -> None:
    first = make_repo({"pyproject.toml": PYPROJECT}, name="first")
    second = make_repo({"pyproject.toml": PYPROJECT}, name="second")
    env = {"GIT_DIR": str(first / ".git"), "GIT_WORK_TREE": str(first)}
    done = _uvdock(second, env, "--repo", str(second), "merge-driver", "install")
    assert done.returncode in (2, 3), done.stderr
    assert len([line for line in done.stderr.splitlines() if line.startswith("error:")]) == 1
    assert "GIT_WORK_TREE" in done.stderr or "GIT_DIR" in done.stderr
    assert not (first / ".git" / "info" / "attributes").exists()
    assert not (second / ".git" / "info" / "attributes").exists()


def test_a_dot_git_file_pointing_at_a_plain_folder_gets_no_lock(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {elsewhere}\n")
    (work / "pyproject.toml").write_text(PYPROJECT)
    done = _uvdock(work, {}, "merge-driver", "install")
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert list(elsewhere.iterdir()) == []  # no uvdock/lock created where git sees nothing


def test_a_linked_worktree_still_locks_in_its_own_git_folder(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo({"pyproject.toml": PYPROJECT})
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked), "-b", "side")
    done = _uvdock(linked, {}, "merge-driver", "install")
    assert done.returncode == 0, done.stderr
    assert (repo / ".git" / "worktrees" / "linked" / "uvdock" / "lock").exists() or (
        repo / ".git" / "uvdock" / "lock"
    ).exists()
