"""`uvdock lts pin SPEC... --lts [--add]`: change LTS pins, only on explicit request."""

from __future__ import annotations

import argparse

from uvdock.cli import optin
from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import InputRefused, UvdockError
from uvdock.files import edit
from uvdock.lts import requirements as lts


def next_steps(ctx: Context) -> list[str]:
    """What follows a pin change, as it can be done on this machine: the image build only
    where this engine can build the LTS Dockerfile."""
    from uvdock.run.build_check import build_refusal

    rebuild = "rebuild the LTS image: uvdock image build --lts"
    try:
        refused = build_refusal(ctx, base.engine_for(ctx), ctx.config.lts_dockerfile)
    except UvdockError:  # no engine here: the build says so itself
        refused = None
    if refused is not None and refused.refuse:
        rebuild = f"the LTS image cannot be built here ({refused.message}); CI builds it"
    return [rebuild, "run the LTS CI lane: put the `container::lts` label on the merge request"]


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        add = parser.add_argument
        add("specs", nargs="+", metavar="SPEC", help="name==VERSION or 'name @ URL'")
        add("--add", action="store_true", help="append names the pin set does not have yet")
        optin.add_lts_flag(parser)

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        from uvdock.lts import pin as lts_edit

        words = ["lts", "pin", *args.specs, *(["--add"] if args.add else [])]
        optin.require_lts(args.lts, "lts pin", optin.command_line(ctx, *words))
        specs = lts_edit.parse_specs(args.specs)
        path = ctx.repo / ctx.config.lts_requirements
        display = ctx.rel(path)
        old = lts.load(path, display).text
        try:
            plan = lts_edit.plan_pins(old, specs, add=args.add)
        except InputRefused as exc:
            raise InputRefused(f"{display}: {exc.message}", hint=exc.hint) from None
        file_edit = edit.FileEdit(path, old, plan.new_text, display=display)
        if file_edit.changed and not ctx.dry_run:
            edit.apply([file_edit])
        steps = next_steps(ctx) if file_edit.changed else []
        if ctx.options.json:
            changes = [c._asdict() for c in plan.changes]
            unchanged = [pin.name for pin in plan.unchanged]
            document = {"path": display, "changes": changes, "unchanged": unchanged}
            ctx.out.json(document | {"diff": file_edit.diff(), "next_steps": steps})
            return 0
        for pin in plan.unchanged:
            ctx.out.info(f"{display}:{pin.line}: {pin.name} is already {pin.spec}")
        if not file_edit.changed:
            ctx.out.info("nothing to change")
            return 0
        ctx.out.diff(file_edit.diff())
        if ctx.dry_run:
            ctx.out.info(f"dry run: {display} not written")
            return 0
        ctx.out.info(f"wrote {display} ({len(plan.changes)} pin(s)); next steps:")
        for number, step in enumerate(steps, 1):
            ctx.out.info(f"  {number}. {step}")
        return 0
