"""`uvdock merge-driver pyproject BASE OURS THEIRS [PATH]`: the git merge driver for pyproject.toml.

git runs it (registered by `uvdock merge-driver install --pyproject`) with the three
versions in temporary files; the result must be left in OURS (%A). A merge of the
dependency declarations (lock.pyproject_merge) that meets no real conflict is written
there and the driver exits 0. On a real conflict, or a side that is not TOML, it falls
back to git's ordinary textual merge (`git merge-file`, conflict markers included) and
exits 1, so the user sees exactly what git would have shown without the driver.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from uvdock.commands.base import Command as BaseCommand
from uvdock.context import Context
from uvdock.edit import atomic_write_bytes


def _texts(paths: list[Path]) -> list[str] | None:
    try:
        return [p.read_bytes().decode("utf-8") for p in paths]
    except (OSError, UnicodeDecodeError):
        return None


def fall_back(ours: Path, base: Path, theirs: Path, marker_size: int) -> int:
    """git's own textual merge into `ours`; 1 when it left conflict markers."""
    from uvdock.run import proc

    argv = ["git", "merge-file", f"--marker-size={marker_size}"]
    argv += ["-L", "ours", "-L", "base", "-L", "theirs", str(ours), str(base), str(theirs)]
    done = proc.run(argv, check=False)
    return 0 if done.returncode == 0 else 1


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

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.lock.pyproject_merge import merge_pyproject

        texts = _texts([args.base, args.ours, args.theirs])
        reason = f"{args.path} is not UTF-8 text"
        if texts is not None:
            try:
                result = merge_pyproject(*texts)
            except ValueError as exc:
                reason = f"{args.path}: one side is not valid TOML ({exc})"
            else:
                if result.text is not None:
                    atomic_write_bytes(args.ours, result.text.encode("utf-8"))
                    ctx.out.info(
                        f"uvdock: merged the dependency declarations of {args.path} "
                        f"({len(result.taken)} changes from both sides)"
                    )
                    return 0
                lines = "".join(f"\n  {c.line()}" for c in result.conflicts)
                reason = f"{args.path} has conflicts uvdock will not decide:{lines}"
        ctx.out.warn(f"{reason}\nfalling back to git's conflict markers")
        return fall_back(args.ours, args.base, args.theirs, args.marker_size)
