"""`uvdock recipe ...`: one module per subcommand, and the body mark-broken and unmark share:
plan, then show or write, report."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from uvdock.context import Context

if TYPE_CHECKING:
    from uvdock.recipes.parse import Recipe
    from uvdock.recipes.plan import Plan


def edit_recipes(
    ctx: Context,
    command: str,
    case: str,
    make_plan: Callable[[list[Recipe], bool], Plan],
    *,
    lts: bool,
    argv: list[str],
    nothing_exit: int = 0,
) -> int:
    """Plan over the recipes that run `case` (an unknown case is refused; `lts`: the opt-in),
    then apply or show the diff; `nothing_exit` when the plan changes nothing."""
    from uvdock.cli import optin
    from uvdock.files import edit
    from uvdock.recipes.parse import require_case

    found = require_case(ctx.repo, ctx.config.recipes_dir, case)
    plan = make_plan(found, lts)
    # Nothing outside LTS to change: if LTS rows are what is left, say how to opt in.
    if not plan.changes and not lts and make_plan(found, True).changes:
        optin.require_lts(False, f"{command} on LTS rows", argv)
    if ctx.dry_run:
        ctx.out.diff(edit.plan_diff(plan.changed_edits))
    else:
        edit.apply(plan.changed_edits)
    if ctx.options.json:
        ctx.out.json(plan.as_json(case))
    else:
        for line in plan.report(ctx.dry_run):
            ctx.out.info(line)
    return 0 if plan.changes else nothing_exit
