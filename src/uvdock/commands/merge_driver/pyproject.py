"""`uvdock merge-driver pyproject BASE OURS THEIRS [PATH]`: the git merge driver for pyproject.toml.

git runs it (`merge-driver install --pyproject`) with the three versions in temporary files;
the result goes into OURS (%A). Never worse than git: git's own textual merge (`git
merge-file -p`, nothing written) is kept wherever it means what the structured merge
(uvdock.merge) decided; a merge without a real conflict is written and the driver exits 0,
naming every change it took. On a real conflict, or a side tomllib refuses, it falls back to
git's `git merge-file` (conflict markers included) and exits 1, as git would without it.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.commands.base import Command as BaseCommand
from uvdock.context import Context
from uvdock.errors import CommandFailed, UvdockError
from uvdock.files import textlines
from uvdock.files.edit import FileEdit, atomic_write_bytes
from uvdock.merge.report import lines, report, sides
from uvdock.run import git

if TYPE_CHECKING:
    from uvdock.merge.pyproject import MergeResult
    from uvdock.merge.textual import Textual


def _in_rebase() -> bool:
    """git runs the driver at the top of the work tree; a rebase swaps ours and theirs."""
    try:
        return git.in_progress_operation(Path.cwd()) == "rebase"
    except (UvdockError, OSError):
        return False  # run by hand outside a repository


def side_labels(given: list[str] | None, env: Mapping[str, str]) -> tuple[str, str]:
    """What ours and theirs are called: git's own labels (%X %Y, git 2.44 and later), else
    found as git would name them: a merge's branch (`git merge` sets GITHEAD_<id> to the
    name it was given) and HEAD's; a rebase's onto branch and the commit being replayed."""
    if given and not any(label.startswith("%") for label in given[1:]):
        return given[1], given[2]
    repo = Path.cwd()
    theirs = next((v for k, v in sorted(env.items()) if k.startswith("GITHEAD_")), "theirs")
    try:
        ours = git.current_branch(repo) or "HEAD"
        progress = git.in_progress(repo) if _in_rebase() else None
    except (UvdockError, OSError):
        return "ours", "theirs"  # run by hand outside a repository
    if progress is not None and progress.onto is not None:
        ours = (git.names_of(repo, progress.onto) or [progress.onto[:12]])[0]
        theirs = _replayed(git.git_dir(repo)) or "your commit being replayed"
    return ours, theirs


def _replayed(git_dir: Path) -> str | None:
    """`your commit ID (subject)`: the pick a rebase runs is the last line of its done list."""
    try:
        done = textlines.read_text(git_dir / "rebase-merge" / "done", errors="replace")
    except OSError:
        return None
    words = (done.strip().splitlines() or [""])[-1].split(maxsplit=2)
    if len(words) < 2:
        return None
    return f"your commit {words[1][:12]}" + (f" ({words[2]})" if len(words) > 2 else "")


def _broken_toml(path: Path) -> bool:
    """True when tomllib (as uv) rejects the file: a duplicate key one side added, say.
    A parser depth limit is not the file's fault (the TOML is valid), so not here."""
    import tomllib

    try:
        tomllib.loads(textlines.read_bytes(path).decode("utf-8-sig"))  # uv reads a BOM
    except ValueError:  # not TOML, not UTF-8, or an integer of thousands of digits
        return True
    except RecursionError:
        pass
    return False


def fall_back(
    ctx: Context, args: argparse.Namespace, labels: tuple[str, str], texts: list[str] | None
) -> int:
    """git's own merge into OURS, its markers naming the sides; a clean one that is not TOML
    still stops the merge (exit 1), so git does not commit a pyproject.toml uv refuses. With
    `texts` (git's clean merge was found to mean something else than the merge decided) the
    whole file is left as one conflict instead."""
    from uvdock.run import proc

    argv = ["git", "merge-file", f"--marker-size={args.marker_size}"]
    argv += ["-L", labels[0], "-L", "base", "-L", labels[1]]
    done = proc.run([*argv, str(args.ours), str(args.base), str(args.theirs)], check=False)
    if done.returncode == 0 and texts is not None:
        from uvdock.merge.textual import whole_file_conflict

        atomic_write_bytes(args.ours, whole_file_conflict(texts, args.marker_size).encode("utf-8"))
        ctx.out.warn("left the whole file as one conflict (ours | base | theirs)")
    elif done.returncode != 0:
        ctx.out.warn("fell back to git's conflict markers")
    elif _broken_toml(args.ours):
        ctx.out.warn(
            f"git's merge is clean but is not valid TOML; {args.path} is left unmerged "
            "with git's text: fix it, then `git add` it"
        )
    else:
        ctx.out.warn("fell back to git's own merge (clean)")
        return 0
    return 1


def textual_merge(ours: Path, base: Path, theirs: Path) -> Textual | None:
    """git's merge of the three files, printed (nothing written); None if git cannot."""
    from uvdock.merge.textual import MARKER_SIZE, Textual

    try:
        return Textual(*git.merge_file_print(ours, base, theirs, MARKER_SIZE))
    except CommandFailed:
        return None


def show_sides_diff(ctx: Context, texts: list[str], merged: str, path: str) -> None:
    """--dry-run: the merged file as a diff against each side (texts: base, ours, theirs)."""
    for side, text in (("ours", texts[1]), ("theirs", texts[2])):
        diff = FileEdit(Path(path), text, merged, f"{path} ({side})").diff()
        ctx.out.info(f"merged {path} against {side}:" + ("" if diff else " identical"))
        ctx.out.diff(diff)


def _counted(result: MergeResult, labels: tuple[str, str]) -> str:
    """`1 change from feature, 1 from main`: each side's changes as its own."""
    counts = [
        (n, label)
        for side, label in zip(("ours", "theirs"), labels, strict=True)
        if (n := sum(t.side == side for t in result.taken))
    ]
    if not counts:
        return "no change from either side"
    (first, label), *rest = counts
    said = [f"{first} change{'s' if first > 1 else ''} from {label}"]
    return ", ".join(said + [f"{n} from {other}" for n, other in rest])


class Command(BaseCommand):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "The git merge driver for pyproject.toml (git runs it; see "
            "`uvdock merge-driver install --pyproject`)."
        )
        parser.add_argument("base", type=Path, help="%%O: the common ancestor's version")
        parser.add_argument("ours", type=Path, help="%%A: ours; the result is written here")
        parser.add_argument("theirs", type=Path, help="%%B: theirs")
        parser.add_argument("path", nargs="?", default="pyproject.toml", help="%%P: the path")
        parser.add_argument("--marker-size", type=int, default=7, help="%%L")
        parser.add_argument(
            "--labels",
            nargs=3,
            metavar=("BASE", "OURS", "THEIRS"),
            help="%%S %%X %%Y: the names git gives the sides (git 2.44 and later)",
        )

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.merge.pyproject import MergeUnwritable, merge_pyproject

        labels = side_labels(args.labels, ctx.env)
        # whole: the texts, when git's clean merge is known to mean otherwise than decided
        texts, result, whole, reason = None, None, None, f"{args.path} is not UTF-8 text"
        with contextlib.suppress(OSError, UnicodeDecodeError):
            texts = [textlines.read_text(p) for p in (args.base, args.ours, args.theirs)]
        if texts is not None:
            try:
                textual = textual_merge(args.ours, args.base, args.theirs)
                result = merge_pyproject(texts[0], texts[1], texts[2], textual)
                conflicts = "".join(f"\n  {c.line()}" for c in result.conflicts)
                reason = f"{args.path} has conflicts uvdock will not decide:{conflicts}"
            except ValueError as exc:
                reason = f"{args.path}: {exc}"
                whole = texts if isinstance(exc, MergeUnwritable) else None
        ctx.out.json({"pyproject": report(result) if result else None})  # --json only
        if result is not None and result.text is not None and texts is not None:
            if ctx.dry_run:
                show_sides_diff(ctx, texts, result.text, args.path)
            else:
                atomic_write_bytes(args.ours, result.text.encode("utf-8"))
            ctx.out.info(f"uvdock: merged {args.path} ({_counted(result, labels)})")
            if result.taken and _in_rebase():
                ctx.out.info(f"  (a rebase: {sides('rebase')})")
            ctx.out.info("\n".join(f"  {line}" for line in lines(result)))
            return 0
        ctx.out.warn(reason + "\nwould fall back to git's own merge" * ctx.dry_run)
        return 1 if ctx.dry_run else fall_back(ctx, args, labels, whole)
