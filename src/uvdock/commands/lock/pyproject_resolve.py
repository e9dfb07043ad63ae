"""The pyproject.toml step of `lock resolve`: merge its three index stages, or refuse.

Two branches that each ran `uv add` leave pyproject.toml unmerged next to uv.lock. The
three versions git recorded (stage 1 base, 2 ours, 3 theirs) are merged by
lock.pyproject_merge; a real conflict is refused (exit 2) with one line per conflict
before anything is touched. Writing and staging the merged file happen in lock_resolve,
inside its saved-state guard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from uvdock.errors import InputRefused
from uvdock.run import git

if TYPE_CHECKING:
    from pathlib import Path

    from uvdock.context import Context
    from uvdock.lock.pyproject_merge import MergeResult

PYPROJECT = "pyproject.toml"


def sides(operation: str | None) -> str:
    """What ours and theirs are: a rebase swaps them."""
    if operation == "rebase":
        return "ours = the branch you rebase onto, theirs = your commit being replayed"
    return "ours = HEAD, theirs = what is being merged in"


@dataclass(frozen=True)
class PyprojectMerge:
    merged: bytes
    current: bytes  # the conflicted working-tree file the merge replaces
    result: MergeResult

    def report(self) -> dict[str, Any]:
        return report(self.result)


def report(result: MergeResult) -> dict[str, Any]:
    taken: dict[str, list[dict[str, str]]] = {"ours": [], "theirs": []}
    for t in result.taken:
        taken[t.side].append({"path": t.path, "entry": t.entry, "change": t.change})
    conflicts = [{"path": c.path, "ours": c.ours, "theirs": c.theirs} for c in result.conflicts]
    return {"merged": result.text is not None, "taken": taken, "conflicts": conflicts}


def is_unmerged(repo: Path) -> bool:
    return bool(git.unmerged_entries(repo, PYPROJECT))


def _stage_texts(repo: Path) -> list[str]:
    stages = {e.stage: e for e in git.unmerged_entries(repo, PYPROJECT)}
    if set(stages) != {1, 2, 3}:
        missing = ", ".join(str(n) for n in sorted({1, 2, 3} - set(stages)))
        raise InputRefused(
            f"{PYPROJECT} is unmerged without index stage {missing} (added or deleted on one "
            "side); uvdock merges only a file both sides changed",
            hint=f"resolve {PYPROJECT} by hand, `git add` it, then run `uvdock lock resolve` again",
        )
    texts: list[str] = []
    for stage in (1, 2, 3):
        data = git.blob_bytes(repo, stages[stage].sha)
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise InputRefused(f"{PYPROJECT} (index stage {stage}) is not UTF-8 text") from None
    return texts


def merge_unmerged(ctx: Context) -> PyprojectMerge:
    """The merged pyproject.toml, or InputRefused (with nothing changed) on a conflict."""
    from uvdock.lock.pyproject_merge import merge_pyproject

    repo = ctx.repo
    base, ours, theirs = _stage_texts(repo)
    try:
        result = merge_pyproject(base, ours, theirs)
    except ValueError as exc:
        raise InputRefused(f"{PYPROJECT}: one side is not valid TOML ({exc})") from None
    if result.text is None:
        if ctx.out.json_mode:
            ctx.out.json({"conflict": True, "resolved": False, "pyproject": report(result)})
        lines = "\n".join(f"  {c.line()}" for c in result.conflicts)
        count = len(result.conflicts)
        raise InputRefused(
            f"{PYPROJECT}: {count} conflict{'s' if count > 1 else ''} uvdock will not decide "
            f"({sides(git.in_progress_operation(repo))}); nothing was changed:\n{lines}",
            hint=f"edit {PYPROJECT}, `git add {PYPROJECT}`, then run `uvdock lock resolve` again",
        )
    current = (repo / PYPROJECT).read_bytes() if (repo / PYPROJECT).is_file() else b""
    return PyprojectMerge(result.text.encode("utf-8"), current, result)


def show_plan(ctx: Context, merge: PyprojectMerge) -> None:
    """--dry-run: the merged file as a diff against the conflicted working-tree file."""
    from uvdock.edit import FileEdit

    edit = FileEdit(
        ctx.repo / PYPROJECT,
        merge.current.decode("utf-8", errors="replace"),
        merge.merged.decode("utf-8"),
        PYPROJECT,
    )
    ctx.out.info(f"would write the merged {PYPROJECT}:")
    ctx.out.diff(edit.diff())
    ctx.out.command(["git", "add", "--", PYPROJECT])


def show_taken(ctx: Context, merge: PyprojectMerge, operation: str | None) -> None:
    ctx.out.info(f"merged {PYPROJECT} ({sides(operation)}) and staged it:")
    for t in merge.result.taken:
        entry = f" {t.entry}" if t.entry else ""
        ctx.out.info(f"  {t.side:6} {t.change:7} {t.path}{entry}")
