"""Small git helpers. Each runs one short captured git command and returns plain data.

They use run.captured (the standard library), not the plumbum door: see that module.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import CommandFailed, EnvironmentUnusable
from uvdock.run import captured as proc


def _git(repo: Path, *args: str, check: bool = True) -> proc.Completed:
    return proc.run(["git", "-C", str(repo), *args], check=check)


def _dot_git(start: Path) -> Path | None:
    """The `.git` entry (a folder, or a file in worktrees and submodules) above `start`."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return None  # git's own rules apply; ask git
    for folder in (start, *start.parents):
        candidate = folder / ".git"
        if candidate.exists():
            return candidate
    return None


def toplevel(start: Path) -> Path:
    # Walking up for .git costs microseconds; `git rev-parse` costs a process start on
    # every command, which the exec start-up budget cannot afford.
    dot_git = _dot_git(start)
    if dot_git is not None and (
        dot_git.is_dir() or dot_git.read_text(errors="replace").startswith("gitdir:")
    ):
        return dot_git.parent
    try:
        out = proc.run(["git", "-C", str(start), "rev-parse", "--show-toplevel"])
    except CommandFailed as exc:
        raise EnvironmentUnusable(
            f"{start} is not inside a git repository (use --repo PATH)"
        ) from exc
    return Path(out.stdout.strip())


def git_dir(repo: Path) -> Path:
    dot_git = _dot_git(repo)
    if dot_git is not None and dot_git.is_dir():
        return dot_git.resolve()
    if dot_git is not None:
        text = dot_git.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            return (dot_git.parent / text.split(":", 1)[1].strip()).resolve()
    out = _git(repo, "rev-parse", "--absolute-git-dir")
    return Path(out.stdout.strip())


def rev_exists(repo: Path, rev: str) -> bool:
    return _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).ok


def rev_parse(repo: Path, rev: str) -> str:
    return _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}").stdout.strip()


def show_file(repo: Path, rev: str, path: str) -> bytes | None:
    """`git show REV:path` as bytes (path relative to `repo`), or None when REV has none."""
    try:
        return proc.run_bytes(["git", "-C", str(repo), "show", f"{rev}:./{path}"])
    except CommandFailed:
        return None


def ls_files(repo: Path, *pathspecs: str) -> list[str]:
    out = _git(repo, "ls-files", "-z", "--", *pathspecs)
    return [p for p in out.stdout.split("\0") if p]


def grep_files(repo: Path, pattern: str, *pathspecs: str) -> list[tuple[str, int, str]]:
    """Tracked lines matching a fixed string: (path, 1-based line, text)."""
    out = _git(repo, "grep", "-n", "-I", "-F", "-z", "-e", pattern, "--", *pathspecs, check=False)
    if out.returncode not in (0, 1):
        raise CommandFailed(out.argv, out.returncode, out.stdout, out.stderr)
    hits: list[tuple[str, int, str]] = []
    for line in out.stdout.splitlines():
        parts = line.split("\0", 2)
        if len(parts) == 3:
            hits.append((parts[0], int(parts[1]), parts[2]))
    return hits


def remote_url(repo: Path, name: str) -> str | None:
    out = _git(repo, "remote", "get-url", name, check=False)
    return out.stdout.strip() if out.ok else None


def remote_of(ref: str, repo: Path) -> str | None:
    """The remote a ref like `origin/main` belongs to, when it is a remote-tracking ref."""
    name = ref.split("/", 1)[0]
    return name if "/" in ref and remote_url(repo, name) is not None else None


def fetch(repo: Path, remote: str, branch: str | None = None) -> proc.Completed:
    args = ["fetch", "--quiet", remote] + ([branch] if branch else [])
    return _git(repo, *args, check=False)


class IndexEntry(NamedTuple):
    mode: str
    sha: str
    stage: int
    path: str


def unmerged_entries(repo: Path, path: str) -> list[IndexEntry]:
    out = _git(repo, "ls-files", "-u", "-z", "--", path)
    return [_index_entry(item) for item in out.stdout.split("\0") if item]


def stage_entries(repo: Path, path: str) -> list[IndexEntry]:
    """All index entries of a path (stage 0 when clean, stages 1-3 when conflicted)."""
    out = _git(repo, "ls-files", "-s", "-z", "--", path)
    return [_index_entry(item) for item in out.stdout.split("\0") if item]


def _index_entry(item: str) -> IndexEntry:
    meta, path = item.split("\t", 1)
    mode, sha, stage = meta.split()
    return IndexEntry(mode, sha, int(stage), path)


def unmerged_paths(repo: Path) -> list[str]:
    out = _git(repo, "diff", "--name-only", "--diff-filter=U", "-z")
    return sorted({p for p in out.stdout.split("\0") if p})


def in_progress_operation(repo: Path) -> str | None:
    """'merge', 'rebase', 'cherry-pick', 'revert' or None."""
    gd = git_dir(repo)
    if (gd / "rebase-merge").is_dir() or (gd / "rebase-apply").is_dir():
        return "rebase"
    for marker, name in (
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
    ):
        if (gd / marker).exists():
            return name
    return None


def add(repo: Path, *paths: str) -> None:
    _git(repo, "add", "--", *paths)


def head_sha(repo: Path) -> str | None:
    out = _git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    return out.stdout.strip() if out.ok else None


# --- added for `lock resolve` / `merge-driver install` -------------------------------


def blob_bytes(repo: Path, sha: str) -> bytes:
    """The content of a blob object, exact bytes."""
    return proc.run_bytes(["git", "-C", str(repo), "cat-file", "blob", sha])


def object_exists(repo: Path, sha: str) -> bool:
    return _git(repo, "cat-file", "-e", sha, check=False).ok


def hash_object_file(repo: Path, file: Path) -> str:
    """Store a file's bytes as a blob object (`git hash-object -w`) and return its id."""
    return _git(repo, "hash-object", "-w", "--no-filters", "--", str(file)).stdout.strip()


def set_index_entries(repo: Path, path: str, entries: list[IndexEntry]) -> None:
    """Replace every index entry of `path` (all stages) with `entries`, exactly.

    A mode-0 line first drops whatever the index holds for the path; then each entry is
    written back with its mode, blob and stage (`git update-index --index-info`).
    """
    width = len(entries[0].sha) if entries else 40  # 64 in a SHA-256 repository
    lines = [f"0 {'0' * width}\t{path}"]
    lines += [f"{e.mode} {e.sha} {e.stage}\t{path}" for e in entries]
    proc.run(
        ["git", "-C", str(repo), "update-index", "--index-info"],
        input_text="\n".join(lines) + "\n",
    )


def ls_files_unmerged_text(repo: Path, path: str) -> str:
    """`git ls-files -u -- path` exactly as git prints it."""
    return _git(repo, "ls-files", "-u", "--", path).stdout


def git_path(repo: Path, name: str) -> Path:
    """`git rev-parse --git-path NAME`, absolute (info/attributes lives in the common dir)."""
    out = _git(repo, "rev-parse", "--git-path", name).stdout.strip()
    path = Path(out)
    return path if path.is_absolute() else repo / path


def config_get(repo: Path, key: str) -> str | None:
    out = _git(repo, "config", "--local", "--get", key, check=False)
    return out.stdout.rstrip("\n") if out.ok else None


def config_set(repo: Path, key: str, value: str) -> None:
    _git(repo, "config", "--local", key, value)
