"""Which managed pin files git tracks but the work tree lacks: left out by a sparse checkout, or
deleted without the deletion committed (the two need different ways back). Asked only when a
managed file is missing, so `image check` on a full checkout starts no git."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uvdock.context import Context


def absent_tracked(ctx: Context) -> dict[str, bool]:
    """Each tracked managed file the work tree lacks, with whether a sparse checkout left it out."""
    from uvdock.image.scan import managed_paths

    missing = [p for p in managed_paths(ctx.config) if not os.path.lexists(ctx.repo / p)]
    if not missing:
        return {}
    from uvdock.errors import UvdockError
    from uvdock.run import git

    try:
        tracked = git.ls_files_skipped(ctx.repo, *(f":(literal){path}" for path in missing))
    except UvdockError:
        return {}  # not a git work tree (or no git): nothing is tracked
    return {path: skipped for path, skipped in tracked.items() if path in missing}
