"""The pyproject.toml step of `lock resolve`: merge its three index stages, or refuse.

Two branches that each ran `uv add` leave pyproject.toml unmerged next to uv.lock. The
three versions git recorded (stage 1 base, 2 ours, 3 theirs) are merged by
lock.pyproject_merge, preferring git's own textual merge of them wherever it means the
same; a real conflict, or a side that is not TOML as tomllib reads it, is refused
(exit 2) with one line per conflict before anything is touched. Writing and staging the merged file happen in lock_resolve,
inside its saved-state guard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from uvdock.errors import InputRefused
from uvdock.files import textlines
from uvdock.merge.report import sides
from uvdock.run import git

if TYPE_CHECKING:
    from pathlib import Path

    from uvdock.context import Context
    from uvdock.merge.pyproject import MergeResult
    from uvdock.merge.textual import Textual

PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class PyprojectMerge:
    merged: bytes
    current: bytes  # the conflicted working-tree file the merge replaces
    result: MergeResult
    sides: tuple[str, str] = ("", "")  # ours' and theirs' texts (index stages 2 and 3)
    path: str = PYPROJECT  # from the work tree's root: `infra/tool/pyproject.toml` when nested

    def report(self) -> dict[str, Any]:
        from uvdock.merge.report import report

        return report(self.result)


def is_unmerged(repo: Path, path: str) -> bool:
    return bool(git.unmerged_entries(repo, path))


def _stage_texts(repo: Path, path: str) -> list[str]:
    stages = {e.stage: e for e in git.unmerged_entries(repo, path)}
    if set(stages) != {1, 2, 3}:
        missing = ", ".join(str(n) for n in sorted({1, 2, 3} - set(stages)))
        raise InputRefused(
            f"{path} is unmerged without index stage {missing} (added or deleted on one "
            "side); uvdock merges only a file both sides changed",
            hint=f"resolve {path} by hand, `git add` it, then run `uvdock lock resolve` again",
        )
    texts: list[str] = []
    for stage in (1, 2, 3):
        data = git.blob_bytes(repo, stages[stage].sha)
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise InputRefused(f"{path} (index stage {stage}) is not UTF-8 text") from None
    return texts


def merge_unmerged(ctx: Context, repo: Path, path: str) -> PyprojectMerge:
    """The merged pyproject.toml at `path` (from the work tree's root `repo`), or
    InputRefused (with nothing changed) on a conflict."""
    from uvdock.merge.pyproject import merge_pyproject

    base, ours, theirs = _stage_texts(repo, path)
    try:
        result = merge_pyproject(base, ours, theirs, _textual(repo, base, ours, theirs))
    except ValueError as exc:
        raise InputRefused(
            f"{path}: {exc} ({sides(git.in_progress_operation(repo))}); nothing was changed",
            hint=f"fix {path} by hand, `git add {path}`, then run `uvdock lock resolve`",
        ) from None
    if result.text is None:
        if ctx.out.json_mode:
            from uvdock.merge.report import report

            ctx.out.json({"conflict": True, "resolved": False, "pyproject": report(result)})
        lines = "\n".join(f"  {c.line()}" for c in result.conflicts)
        count = len(result.conflicts)
        raise InputRefused(
            f"{path}: {count} conflict{'s' if count > 1 else ''} uvdock will not decide "
            f"({sides(git.in_progress_operation(repo))}); nothing was changed:\n{lines}",
            hint=f"edit {path}, `git add {path}`, then run `uvdock lock resolve` again",
        )
    current = textlines.read_bytes(repo / path) if (repo / path).exists() else b""
    return PyprojectMerge(result.text.encode("utf-8"), current, result, (ours, theirs), path)


def _textual(repo: Path, base: str, ours: str, theirs: str) -> Textual | None:
    """git's own merge of the three index stages (`git merge-file -p` on copies in a
    temporary folder inside the git directory; nothing in the work tree is written)."""
    from uvdock.commands.merge_driver.pyproject import textual_merge

    try:
        with git.staged_texts(repo, (base, ours, theirs)) as files:
            return textual_merge(files[1], files[0], files[2])
    except OSError:
        return None  # no room in the git directory: the structured merge alone


def show_plan(ctx: Context, merge: PyprojectMerge) -> None:
    """--dry-run: the merged file as a diff against each side, and what it decided."""
    from uvdock.commands.merge_driver.pyproject import show_sides_diff
    from uvdock.merge.report import lines

    ctx.out.info(f"would write the merged {merge.path}:")
    show_sides_diff(ctx, ["", *merge.sides], merge.merged.decode("utf-8"), merge.path)
    for line in lines(merge.result):
        ctx.out.info(f"  {line}")
    ctx.out.info("then run:")
    ctx.out.command(["git", "add", "--", merge.path])


def show_taken(ctx: Context, merge: PyprojectMerge, operation: str | None) -> None:
    from uvdock.merge.report import lines

    ctx.out.info(f"merged {merge.path} ({sides(operation)}) and staged it:")
    for line in lines(merge.result):
        ctx.out.info(f"  {line}")
