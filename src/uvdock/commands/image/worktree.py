"""Which managed pin files git tracks but the work tree lacks (a sparse checkout without them).

Asked only when a managed file is missing, so `image check` on a full checkout starts no git.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uvdock.context import Context


def absent_tracked(ctx: Context) -> frozenset[str]:
    from uvdock.image.scan import managed_paths

    missing = [p for p in managed_paths(ctx.config) if not os.path.lexists(ctx.repo / p)]
    if not missing:
        return frozenset()
    from uvdock.errors import UvdockError
    from uvdock.run import git

    try:
        tracked = git.ls_files(ctx.repo, *(f":(literal){path}" for path in missing))
    except UvdockError:
        return frozenset()  # not a git work tree (or no git): nothing is tracked
    return frozenset(tracked) & set(missing)
