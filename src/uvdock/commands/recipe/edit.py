"""The body `recipe mark-broken` and `recipe unmark` share: plan, then show or write, then report.

Each command only says how to plan its edit of the recipes that run the case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uvdock.context import Context
    from uvdock.recipes.parse import Recipe
    from uvdock.recipes.plan import Plan


def edit_recipes(
    ctx: Context,
    case: str,
    make_plan: Callable[[list[Recipe]], Plan],
    *,
    nothing_to_do_exit: int = 0,
) -> int:
    """Plan over the recipes that run `case` (unknown cases are refused), then apply or diff.

    Returns `nothing_to_do_exit` when the plan changes nothing (unmark: nothing to undo).
    """
    from uvdock.files import edit
    from uvdock.recipes.parse import require_case

    plan = make_plan(require_case(ctx.repo, ctx.config.recipes_dir, case))
    if ctx.dry_run:
        ctx.out.diff(edit.plan_diff(plan.changed_edits))
    else:
        edit.apply(plan.changed_edits)
    code = 0 if plan.changes else nothing_to_do_exit
    if ctx.options.json:
        ctx.out.json(plan.as_json(case))
        return code
    for line in plan.report(ctx.dry_run):
        ctx.out.info(line)
    return code
