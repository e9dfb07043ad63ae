"""The step of `lock resolve` that keeps what only the branch changed in uv.lock.

The three locks come from the index (stage 1 the base; the branch's side is stage 2 in a
merge, stage 3 when a rebase, cherry-pick, revert or am replays the branch's commit) and
the ref's lock the relock starts from; lock.branch_pins says which versions only the
branch moved. After the relock, each one it moved away from is asked for again with
`uv lock --upgrade-package NAME==VERSION`: all at once, and one by one when together
they do not resolve. Kept or not, each is said.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from uvdock.files import textlines
from uvdock.lock import branch_pins, lockfile
from uvdock.lock.resolve_state import GitIndex

if TYPE_CHECKING:
    from pathlib import Path

    from uvdock.context import Context
    from uvdock.run.ci_container import CIContainer

LOCK = "uv.lock"


class Kept(NamedTuple):
    kept: list[branch_pins.Pin]
    not_kept: list[tuple[branch_pins.Pin, str]]  # with the reason

    def lines(self) -> list[str]:
        return [f"kept: {p.said()}" for p in self.kept] + [
            f"could not keep: {p.said()}, because {why}" for p, why in self.not_kept
        ]

    def to_json(self) -> dict[str, list[dict[str, str]]]:
        return {
            "kept": [{"name": p.name, "version": p.version} for p in self.kept],
            "not_kept": [
                {"name": p.name, "version": p.version, "reason": why} for p, why in self.not_kept
            ],
        }


def candidates(
    ctx: Context, index: GitIndex, operation: str | None, ref_lock: bytes, lock: str
) -> list[branch_pins.Pin]:
    """What only the branch changed, from the index stages of `lock` (its path from the
    work tree's root); none without a base."""
    stages = {e.stage: e.sha for e in index.stage_entries(lock)}
    branch_stage = 2 if operation in ("merge", None) else 3
    if 1 not in stages or branch_stage not in stages:
        ctx.out.detail(f"no base and branch versions of {lock} in the index to compare")
        return []
    try:
        pins = branch_pins.branch_only(
            index.blob_bytes(stages[1]), index.blob_bytes(stages[branch_stage]), ref_lock
        )
    except lockfile.LockfileError as exc:
        ctx.out.warn(f"could not compare the three versions of {lock} ({exc})")
        return []
    for pin in pins:
        ctx.out.detail(f"only this branch changed {pin.name} in {lock} (to {pin.version})")
    return pins


def keep(ctx: Context, shim: CIContainer, lock: Path, pins: list[branch_pins.Pin]) -> Kept:
    """Re-apply the pins the relock moved away from (the ones it kept need no word); the
    lock on disk (`lock`) is the result."""
    moved = branch_pins.lost(pins, textlines.read_bytes(lock, textlines.LOCK_LIMIT))
    kept: list[branch_pins.Pin] = []  # only what had to be asked for again is said
    if not moved:
        return Kept(kept, [])
    if _relock_with(ctx, shim, moved):
        return Kept(moved, [])
    if len(moved) == 1:
        return Kept(kept, [(moved[0], _because(moved[0]))])
    not_kept: list[tuple[branch_pins.Pin, str]] = []
    for pin in moved:  # together they do not resolve: each alone, in name order
        if _relock_with(ctx, shim, [pin]):
            kept.append(pin)
        else:
            not_kept.append((pin, _because(pin)))
    return Kept(kept, not_kept)


def _because(pin: branch_pins.Pin) -> str:
    return (
        f"`uv lock --upgrade-package {pin.spec()}` does not resolve with the merged "
        "requirements (uv's words are above)"
    )


def _relock_with(ctx: Context, shim: CIContainer, pins: list[branch_pins.Pin]) -> bool:
    specs = [p.spec() for p in pins]
    ctx.out.info(f"keeping what only this branch changed in {LOCK}: {', '.join(specs)}")
    args = ["lock"]
    for spec in specs:
        args += ["--upgrade-package", spec]
    return shim.run_uv(args, writes=(LOCK,)) == 0
