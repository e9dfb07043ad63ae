"""What a pyproject.toml merge decided, in words and as data: every change taken from one
side, removals first (one the other side never saw is applied silently by any merge)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uvdock.merge.entries import Taken
    from uvdock.merge.pyproject import MergeResult

_PREPOSITION = {"added": "to", "removed": "from", "changed": "in"}
VIA = {
    "git": "git's own merge (clean, and it means the same)",
    "git-hunks": "git's own merge, each conflicted part taken from both sides' lines",
    "uvdock": "uvdock's structured merge",
}


def sides(operation: str | None) -> str:
    if operation == "rebase":
        return "ours = the branch you rebase onto, theirs = your commit being replayed"
    return "ours = HEAD, theirs = what is being merged in"


def sentence(taken: Taken) -> str:
    """`theirs removed flask[async] from project.optional-dependencies.dev`."""
    what = taken.written or taken.entry
    where = f"{what} {_PREPOSITION[taken.change]} {taken.path}" if what else taken.path
    return f"{taken.side} {taken.change} {where}"


def decisions(result: MergeResult) -> list[Taken]:
    """Removals first (the ones to look at), then the rest, each group in file order."""
    return sorted(result.taken, key=lambda t: t.change != "removed")


def report(result: MergeResult) -> dict[str, Any]:
    taken: dict[str, list[dict[str, str]]] = {"ours": [], "theirs": []}
    for t in result.taken:
        taken[t.side].append({k: v for k, v in t._asdict().items() if k != "side"})
    merged = result.text is not None
    return {
        "merged": merged,
        "via": result.via if merged else None,
        "taken": taken,
        "decisions": [sentence(t) for t in decisions(result)],
        "conflicts": [c._asdict() for c in result.conflicts],
        "pins": [{"package": p.package, "pins": dict(p.pins)} for p in result.pins],
    }


def lines(result: MergeResult) -> list[str]:
    out = [f"bytes from {VIA[result.via]}"] if result.text is not None else []
    flag = {"removed": "  (the other side kept it: check)"}
    out += [sentence(t) + flag.get(t.change, "") for t in decisions(result)]
    return out + [f"check: {clash.line()}" for clash in result.pins]
