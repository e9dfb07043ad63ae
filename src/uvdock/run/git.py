"""Small git helpers: short captured git commands (run/proc.py) that return data, and the
small records uvdock keeps in the git dir."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import CommandFailed, EnvironmentUnusable, InputRefused
from uvdock.files import textlines
from uvdock.run import proc


def _git(repo: Path, *args: str, check: bool = True, text: str | None = None) -> proc.Completed:
    return proc.run(["git", "-C", str(repo), *args], check=check, input_text=text)


def _answer(repo: Path, *args: str) -> str | None:
    """git's answer, stripped; None when git fails (no such revision, remote, branch)."""
    out = _git(repo, *args, check=False)
    return out.stdout.strip() if out.ok else None


# Paths git reads relative to the folder it was started in, while uvdock runs git with
# `-C REPO`. (GIT_INDEX_FILE is read after git moved to the work tree's top, as with -C.)
GIT_PATHS = ("GIT_DIR", "GIT_WORK_TREE")


def absolute_git_paths(env: MutableMapping[str, str], cwd: Path) -> None:
    """GIT_PATHS made absolute from where uvdock was started, in `env` and for every git it
    runs: a relative GIT_DIR names the repository the user's own git sees there."""
    for name in GIT_PATHS:
        if (value := env.get(name)) and not os.path.isabs(value):
            env[name] = os.environ[name] = os.path.normpath(cwd / value)


def require_git_work_tree(repo: Path) -> None:
    """With GIT_DIR or GIT_WORK_TREE set, `repo` must lie in the work tree git acts on, or
    uvdock would edit one folder and stage into another repository."""
    names = [name for name in GIT_PATHS if os.environ.get(name)]
    top = toplevel(repo) if names else repo
    if repo != top and top not in repo.parents:
        said = ", ".join(f"{name}={os.environ[name]}" for name in names)
        raise InputRefused(
            f"--repo {repo} is outside the work tree git acts on ({top}, from {said}); "
            "nothing was changed",
            hint=f"unset {' and '.join(names)}, or name a folder inside {top}",
        )


def _dot_git(start: Path) -> Path | None:
    """The `.git` entry (a folder, or a file in worktrees and submodules) above `start`."""
    if any(os.environ.get(name) for name in GIT_PATHS):
        return None  # git's own rules apply; ask git
    return next((f / ".git" for f in (start, *start.parents) if (f / ".git").exists()), None)


def toplevel(start: Path) -> Path:
    # Walking up for .git costs microseconds; `git rev-parse` costs a process start on
    # every command, which the exec start-up budget cannot afford.
    dot_git = _dot_git(start)
    if dot_git is not None and (
        dot_git.is_dir() or textlines.read_text(dot_git, errors="replace").startswith("gitdir:")
    ):
        return dot_git.parent
    top = _answer(start, "rev-parse", "--show-toplevel")
    if top is None:
        raise EnvironmentUnusable(f"{start} is not inside a git repository (use --repo PATH)")
    return Path(top)


def git_dir(repo: Path) -> Path:
    dot_git = _dot_git(repo)
    if dot_git is not None and dot_git.is_dir():
        return dot_git.resolve()
    # A `.git` file (a linked worktree, a submodule) or GIT_DIR: the folder git itself
    # accepts as the repository, never a path read from the file unchecked, since uvdock
    # creates its lock and state there.
    out = _git(repo, "rev-parse", "--absolute-git-dir", check=False)
    if not out.ok:
        raise EnvironmentUnusable(f"{repo}: git finds no repository here ({out.said})")
    return Path(out.stdout.strip())


def read_record(git_dir: Path, name: str, sep: str) -> list[tuple[str, str]]:
    """uvdock's record `name` in the git dir, a pair a line; [] when missing or damaged (not
    text): what it vouched for is checked again, not trusted."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        lines = textlines.read_text(git_dir / "uvdock" / name, newlines=True).splitlines()
        return [(f[0], f[1]) for f in (line.split(sep) for line in lines) if len(f) == 2]
    return []


def write_record(git_dir: Path, name: str, sep: str, pairs: Iterable[tuple[str, str]]) -> None:
    from uvdock.files.edit import atomic_write, ensure_folder

    ensure_folder(git_dir / "uvdock")
    text = "".join(f"{a}{sep}{b}\n" for a, b in sorted(set(pairs)))
    atomic_write(git_dir / "uvdock" / name, text)


# Characters no revision uvdock accepts may hold: whitespace and controls (never in a ref
# name), and `:` (REV:path would name a file, and uvdock appends its own `:path`).
_NOT_IN_REVISION = re.compile(r"[\x00-\x20\x7f:]")


def checked_ref(ref: str, origin: str) -> str:
    """`ref` when it can only be read as a revision, else InputRefused naming `origin`. Runs
    no process, so it comes before any other use of the word: a part starting with `-`
    (`origin/--upload-pack=...` once uvdock splits off the remote) is refused before git
    could take it for an option."""
    if not ref:
        raise InputRefused(f"{origin}: empty revision")
    if any(part.startswith("-") for part in ref.split("/")):
        raise InputRefused(
            f"{origin} {ref!r}: a revision cannot start with '-' (it would read as an option)"
        )
    if (bad := _NOT_IN_REVISION.search(ref)) is not None:
        raise InputRefused(f"{origin} {ref!r}: {bad.group()!r} is not allowed in a revision")
    return ref


def ref_name_ok(repo: Path, name: str) -> bool:
    """`git check-ref-format NAME`: NAME is a well-formed full ref name (`refs/...`)."""
    if not name.startswith("refs/"):
        return False  # also keeps the operand from ever looking like an option
    return _git(repo, "check-ref-format", name, check=False).ok


def verify_commit(repo: Path, rev: str) -> str | None:
    """The commit `rev` names; None when it names none."""
    return _answer(repo, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}")


def show_file(repo: Path, rev: str, path: str) -> bytes | None:
    """The file `path` (relative to `repo`) at REV, as bytes; None when REV has no such file.
    A file past the limit of a lock is refused before it is read (see blob_bytes)."""
    if "\n" in rev + path:  # one object name per line of --batch-check
        return None
    # The type first: a missing object's reply echoes the name asked for (`NAME missing`),
    # and a path holding the word " blob " must not read as one.
    asked = "--batch-check=%(objecttype) %(objectname) %(objectsize)"
    found = _git(repo, "cat-file", asked, check=False, text=f"{rev}:./{path}\n").stdout.split()
    if found[:1] != ["blob"]:  # missing, or a folder (a tree)
        return None
    return _blob(repo, found[1], int(found[2]), textlines.LOCK_LIMIT, f"{rev}:{path}")


def ls_files_skipped(repo: Path, *pathspecs: str) -> dict[str, bool]:
    """Tracked paths, each with whether a sparse checkout leaves it out (`ls-files -t`: S)."""
    out = _git(repo, "ls-files", "-z", "-t", "--", *pathspecs)
    return {item[2:]: item[0] == "S" for item in out.stdout.split("\0") if len(item) > 2}


def grep_files(repo: Path, pattern: str, *pathspecs: str) -> list[tuple[str, int, str]]:
    """Tracked lines matching a fixed string: (path, 1-based line, text)."""
    out = _git(repo, "grep", "-n", "-I", "-F", "-z", "-e", pattern, "--", *pathspecs, check=False)
    if out.returncode not in (0, 1):
        raise CommandFailed(out.argv, out.returncode, out.stdout, out.stderr)
    hits = (line.split("\0", 2) for line in out.stdout.splitlines())
    return [(path, int(number), text) for path, number, text in (h for h in hits if len(h) == 3)]


def remote_url(repo: Path, name: str) -> str | None:
    return _answer(repo, "remote", "get-url", "--end-of-options", name)


def remote_of(ref: str, repo: Path) -> str | None:
    """The remote a ref like `origin/main` belongs to, when it is a remote-tracking ref."""
    name = ref.split("/", 1)[0]
    return name if "/" in ref and remote_url(repo, name) is not None else None


def fetch(repo: Path, remote: str, branch: str | None = None) -> proc.Completed:
    args = ["fetch", "--quiet", "--end-of-options", remote] + ([branch] if branch else [])
    return _git(repo, *args, check=False)


class IndexEntry(NamedTuple):
    mode: str
    sha: str
    stage: int
    path: str


def index_entries(repo: Path, path: str) -> list[IndexEntry]:
    """Every index entry of a path: stage 0 when clean, stages 1-3 when unmerged."""
    items = _git(repo, "ls-files", "-s", "-z", "--", path).stdout.split("\0")
    rows = (item.split("\t", 1) for item in items if item)
    return [IndexEntry(m[0], m[1], int(m[2]), name) for meta, name in rows if (m := meta.split())]


def in_progress_operation(repo: Path, gd: Path | None = None) -> str | None:
    """'merge', 'rebase', 'am', 'cherry-pick', 'revert' or None."""
    gd = gd or git_dir(repo)
    return next((name for marker, name in _MARKERS.items() if (gd / marker).exists()), None)


# What git keeps while each operation is stopped, in the order that tells them apart: `git
# am` keeps its state in rebase-apply/ too, marked by `applying`; SQUASH_MSG: `git merge
# --squash` (no MERGE_HEAD), until the commit.
_MARKERS = {
    "rebase-apply/applying": "am",
    "rebase-merge": "rebase",
    "rebase-apply": "rebase",
    "MERGE_HEAD": "merge",
    "CHERRY_PICK_HEAD": "cherry-pick",
    "REVERT_HEAD": "revert",
    "SQUASH_MSG": "merge",
}


class InProgress(NamedTuple):
    """The operation git stopped in, and the commit whose side is being merged in."""

    operation: str
    onto: str | None  # a commit id; None when git left no record of it
    source: str  # where `onto` was read: MERGE_HEAD, rebase-merge/onto, HEAD, ...


def in_progress(repo: Path) -> InProgress | None:
    """What a conflict resolution should build on: the lock of the ref being merged in. A
    merge brings in MERGE_HEAD; a rebase replays onto its `onto` commit; cherry-pick, revert
    and `git am` apply onto HEAD."""
    gd = git_dir(repo)
    operation = in_progress_operation(repo, gd)
    if operation is None:
        return None
    if operation == "merge" and (gd / "MERGE_HEAD").exists():
        return InProgress(operation, _commit_in(gd / "MERGE_HEAD"), "MERGE_HEAD")
    if operation == "merge":
        # SQUASH_MSG lists the squashed commits newest first, each as a `commit SHA` line
        return InProgress(operation, _commit_in(gd / "SQUASH_MSG", "^commit "), "SQUASH_MSG")
    if operation == "rebase":
        for source in ("rebase-merge/onto", "rebase-apply/onto"):
            if onto := _commit_in(gd / source):
                return InProgress(operation, onto, source)
        return InProgress(operation, None, "rebase-merge/onto")
    return InProgress(operation, verify_commit(repo, "HEAD"), "HEAD")


def _commit_in(path: Path, before: str = r"\A\s*") -> str | None:
    """The first full commit id in a file of git's, right after `before` (a regex)."""
    try:
        text = textlines.read_text(path, errors="replace", newlines=True)
    except OSError:
        return None
    found = re.search(before + r"([0-9a-f]{40}|[0-9a-f]{64})(?!\S)", text, re.MULTILINE)
    return found.group(1) if found else None


def names_of(repo: Path, commit: str) -> list[str]:
    """Branch and tag names pointing at `commit`: local branches, then remote ones, then tags."""
    refs = ("refs/heads", "refs/remotes", "refs/tags")
    at = f"--points-at={commit}"
    out = _git(repo, "for-each-ref", "--format=%(refname:short)", at, *refs, check=False)
    return [n for n in out.stdout.splitlines() if n and not n.endswith("/HEAD")] if out.ok else []


def add(repo: Path, *paths: str) -> None:
    _git(repo, "add", "--", *paths)


def blob_bytes(repo: Path, sha: str, limit: int = textlines.LOCK_LIMIT, what: str = "") -> bytes:
    """A blob's bytes; one over `limit` is refused (exit 2) naming `what` before it is read:
    gigabytes of zeros committed to a branch take kilobytes in git."""
    size = _git(repo, "cat-file", "-s", "--end-of-options", sha).stdout
    return _blob(repo, sha, int(size), limit, what or sha)


def _blob(repo: Path, sha: str, size: int, limit: int, what: str) -> bytes:
    textlines.require_within(what, size, limit)
    return proc.run_bytes(["git", "-C", str(repo), "cat-file", "blob", "--end-of-options", sha])


def object_exists(repo: Path, sha: str) -> bool:
    return _git(repo, "cat-file", "-e", "--end-of-options", sha, check=False).ok


def hash_object_file(repo: Path, file: Path) -> str:
    """The id of a file's bytes, stored as they are (no filters) as a blob object."""
    return _git(repo, "hash-object", "-w", "--no-filters", "--", str(file)).stdout.strip()


def set_index_entries(repo: Path, path: str, entries: list[IndexEntry]) -> None:
    """Replace every index entry of `path` (all stages) with `entries`, exactly: a mode-0
    line first drops whatever the index holds for the path (`git update-index --index-info`)."""
    width = len(entries[0].sha) if entries else 40  # 64 in a SHA-256 repository
    lines = [f"0 {'0' * width}\t{path}", *(f"{e.mode} {e.sha} {e.stage}\t{path}" for e in entries)]
    _git(repo, "update-index", "--index-info", text="".join(line + "\n" for line in lines))


def git_path(repo: Path, name: str) -> Path:
    """`git rev-parse --git-path NAME`, absolute (info/attributes lives in the common dir)."""
    path = Path(_git(repo, "rev-parse", "--git-path", name).stdout.strip())
    return path if path.is_absolute() else repo / path


def config_get(repo: Path, key: str) -> str | None:
    out = _git(repo, "config", "--local", "--get", "--end-of-options", key, check=False)
    return out.stdout.rstrip("\n") if out.ok else None


def config_set(repo: Path, key: str, value: str) -> None:
    _git(repo, "config", "--local", "--end-of-options", key, value)


def current_branch(repo: Path) -> str | None:
    """The checked-out branch's short name; None on a detached HEAD."""
    return _answer(repo, "symbolic-ref", "--short", "-q", "HEAD") or None


def merge_file_print(ours: Path, base: Path, theirs: Path, marker_size: int) -> tuple[str, bool]:
    """`git merge-file -p --diff3`: the merged text exactly (line endings kept), nothing written,
    and whether it was clean; CommandFailed when git cannot merge at all (a binary file)."""
    argv = ["git", "merge-file", "-p", "--diff3", f"--marker-size={marker_size}"]
    argv += ["-L", "ours", "-L", "base", "-L", "theirs", str(ours), str(base), str(theirs)]
    done = proc.run(argv, check=False)
    if done.returncode < 0 or done.returncode > 127:
        raise CommandFailed(argv, done.returncode, done.stdout, done.stderr)
    return done.stdout, done.returncode == 0


@contextlib.contextmanager
def staged_texts(repo: Path, texts: Sequence[str]) -> Iterator[list[Path]]:
    """`texts` as files in a temporary folder inside the git directory (never the work
    tree), for git commands that take files (merge-file); removed afterwards."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="uvdock-merge-", dir=git_dir(repo)) as tmp:
        files = [Path(tmp) / f"text{index}" for index in range(len(texts))]
        for file, text in zip(files, texts, strict=True):
            file.write_bytes(text.encode("utf-8"))
        yield files
