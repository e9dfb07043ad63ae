"""`recipe mark-broken` as an edit plan over the recipe lines (recipes/unmark.py undoes it).

A mark replaces a row's scopes by their broken forms, puts `# Broken: REASON - see issue #N.`
above the scope line and `  # was: [OLD]` at its end. A row of which only some platforms (or
environments) are selected is split: the original keeps the others (`# uvdock-kept: LINE`), a
copy with the selected ones follows (`# uvdock-split: LINE`); an entry of several cases splits
the same way on its `test_case` line. The markers carry the original line for unmark.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.files.textlines import ending_of
from uvdock.recipes.marks import ADDED, KEPT_MARKER, SPLIT_MARKER, broken, placements, unbroken
from uvdock.recipes.parse import Entry, FlowList, Recipe, Row, body_of, flow_list, indent_of
from uvdock.recipes.plan import LTS_ENVIRONMENT, Change, Plan, Who, replace_span, run_steps


class MarkRequest(NamedTuple):
    case: str
    issue: int
    reason: str
    environments: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    suffix: str = "-broken"
    scopes: tuple[str, ...] = ()  # only these scopes of a row (none: every scope)
    lts: bool = False  # the opt-in: without it, rows of the LTS environment are left alone

    def breaks(self, scope: str) -> bool:
        return not scope.endswith(self.suffix) and (not self.scopes or scope in self.scopes)

    def takes(self, environment: str | None) -> bool:
        """Whether rows of `environment` are marked: asked for, and LTS only with the opt-in."""
        envs = self.environments
        return (not envs or environment in envs) and (self.lts or environment != LTS_ENVIRONMENT)

    def on(self, platform: str | None) -> bool:
        return not self.platforms or platform in self.platforms

    def asks(self, who: Who, scope: str) -> bool:
        """Whether this run's `scope` must be broken after the edit (plan.verify_edit)."""
        case, environment, platform = who
        return (
            case == self.case
            and self.breaks(scope)
            and self.takes(environment)
            and self.on(platform)
        )


# `4321`, `#4321`, or the issue's address on GitHub (`/issues/N`) or GitLab (`/-/issues/N`).
_ISSUE = re.compile(
    r"#?(?P<plain>\d+)|https?://[^/\s]+/[^\s?#]+?/(?:-/)?issues/(?P<url>\d+)/?(?:[?#]\S*)?"
)


def parse_issue(text: str) -> int:
    """The issue number of `--issue` as people paste it; anything else is refused."""
    match = _ISSUE.fullmatch(text.strip())
    if match is None:
        raise InputRefused(
            f"--issue {text!r}: expected an issue number",
            hint="e.g. --issue 4321, --issue '#4321' or the issue's https://.../issues/4321 URL",
        )
    return int(match["plain"] or match["url"])


# C0 and C1 controls (tab, CR, the \x1c-\x1e separators), DEL, YAML's other line breaks, and
# what YAML readers reject (lone surrogates from undecodable argv bytes, U+FFFE/U+FFFF) or drop
# silently (a BOM): a reason becomes a one-line YAML comment.
_UNSAFE_IN_COMMENT = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def validate(issue: int, reason: str) -> None:
    if issue <= 0:
        raise InputRefused(f"--issue {issue}: expected a positive issue number")
    if not reason.strip():
        raise InputRefused("--reason is empty: say why the test is broken")
    bad = _UNSAFE_IN_COMMENT.search(reason)
    if bad is not None:
        raise InputRefused(
            f"--reason holds the control character U+{ord(bad[0]):04X}: it must be one line of"
            " printable text (it becomes a YAML comment)",
            hint="retype the reason without pasted control characters",
        )


def _flow(recipe: Recipe, index: int) -> FlowList:
    parsed = flow_list(body_of(recipe.lines[index]))
    if parsed is None:
        raise InputRefused(
            f"{recipe.display}:{index + 1}: expected a one-line [list]; edit this line by hand"
        )
    return parsed


def _split(
    recipe: Recipe,
    lines: list[str],
    block: Entry | Row,
    index: int | None,
    values: Sequence[str],
    selected: Sequence[str],
) -> int:
    """The block twice, the others of `values` on line `index` in the first copy and the
    `selected` ones in the second (platforms from the spec get a line of their own in each).
    Returns the 1-based line of the second copy."""
    halves = []
    for marker, keep in (
        (KEPT_MARKER, [v for v in values if v not in selected]),
        (SPLIT_MARKER, selected),
    ):
        body = lines[block.start : block.end]
        if index is None:
            body.append(f"{' ' * block.key_column}platforms: [{', '.join(keep)}]{marker}{ADDED}")
        else:
            line, parsed = recipe.lines[index], _flow(recipe, index)
            raw = ", ".join(r for i, r in parsed.pairs if i in keep)
            # the tail up to the first marker: the markers are rebuilt, not repeated
            tail = parsed.tail.split(KEPT_MARKER)[0].split(SPLIT_MARKER)[0]
            new = parsed.with_raw(raw, tail) + marker + body_of(line)[indent_of(line) :]
            body[index - block.start] = new + ending_of(line)
        halves.append(body)
    replace_span(lines, block.start, block.end, halves[0] + halves[1])
    return block.start + len(halves[0]) + 1


def _mark_row(recipe: Recipe, lines: list[str], row: Row, request: MarkRequest) -> Change:
    index = row.scope_line
    assert index is not None
    line = recipe.lines[index]
    parsed = _flow(recipe, index)
    new_raw = ", ".join(
        broken(raw, request.suffix) if request.breaks(i) else raw for i, raw in parsed.pairs
    )
    comment = f"{' ' * indent_of(line)}# Broken: {request.reason} - see issue #{request.issue}."
    scope = f"{parsed.with_raw(new_raw)}  # was: [{parsed.raw}]"
    replace_span(lines, index, index + 1, [comment + ending_of(line), scope + ending_of(line)])
    return Change(recipe.display, index + 2, f"scope [{parsed.raw}] -> [{new_raw}]")


def _mark_step(recipe: Recipe, lines: list[str], request: MarkRequest) -> Change | None:
    for entry in recipe.entries_of(request.case):
        for row in entry.rows:
            environments = tuple(filter(request.takes, row.environments))
            platforms = tuple(filter(request.on, row.platforms))
            if (request.environments or row.environments) and not environments:
                continue  # none of the asked environments, or an LTS-only row without --lts
            if (request.platforms and not platforms) or row.scope_line is None:
                continue
            if not any(request.breaks(s) for s in row.scopes):
                continue
            if len(entry.cases) > 1:
                line = _split(recipe, lines, entry, entry.case_line, entry.cases, [request.case])
                return Change(
                    recipe.display, line, f"split {request.case} out of [{', '.join(entry.cases)}]"
                )
            split_env = len(environments) < len(row.environments)
            split_platform = len(platforms) < len(row.platforms)
            if split_env and split_platform:
                raise InputRefused(
                    f"{recipe.display}:{row.start + 1}: the row would split on both environment"
                    " and platform",
                    hint="narrow with --environment or with --platform, one at a time",
                )
            if split_platform or split_env:
                key, values, selected = (
                    ("platforms", row.platforms, platforms)
                    if split_platform
                    else ("environment", row.environments, environments)
                )
                line = _split(recipe, lines, row, row.keys.get(key), values, selected)
                what = f"split {key} [{', '.join(values)}]: [{', '.join(selected)}] apart"
                return Change(recipe.display, line, what)
            return _mark_row(recipe, lines, row, request)
    return None


def plan_mark(recipes: Sequence[Recipe], request: MarkRequest) -> Plan:
    """Mark every matching row of `request.case` broken. Refuses when no row matches the filters."""
    validate(request.issue, request.reason)
    runs = placements(recipes, request.case)
    filters = {
        "environment": request.environments,
        "platform": request.platforms,
        "scope": request.scopes,
    }
    matching = [
        p
        for p in runs
        if all(
            not wanted or set(have) & set(wanted)
            for have, wanted in zip(
                (p.environments, p.platforms, [unbroken(s, request.suffix) for s in p.scopes]),
                filters.values(),
                strict=True,
            )
        )
    ]
    if not matching:
        where = "; ".join(
            f"{p.path}:{p.line} [{', '.join(p.environments)}] on [{', '.join(p.platforms)}]"
            + (f" in [{', '.join(p.scopes)}]" if request.scopes else "")
            for p in runs
        )
        asked = " and ".join(f"{name} {', '.join(v)}" for name, v in filters.items() if v)
        raise InputRefused(f"{request.case} has no row for {asked}", hint=f"it runs: {where}")
    edits, changes = run_steps(
        recipes,
        lambda r, lines: _mark_step(r, lines, request),
        request.asks,
        lambda case, env: False,
        request.suffix,
    )
    if not changes and not any(p.scopes for p in matching):  # runs nowhere: nothing to break
        raise InputRefused(
            f"{matching[0].path}:{matching[0].line}: {request.case} has an empty scope list here"
            " (`scope: []`): it runs in no scope, so there is nothing to mark broken; nothing was"
            " changed"
        )
    what = f"in scope {', '.join(request.scopes)} " if request.scopes else ""
    lts_rows = [] if request.lts else [p for p in matching if LTS_ENVIRONMENT in p.environments]
    which = "non-LTS row" if lts_rows else "row"
    notes = [] if changes else [f"{request.case} is already broken {what}in every matching {which}"]
    notes += [
        f"{p.path}:{p.line}: "
        + ("this LTS row" if set(p.environments) == {LTS_ENVIRONMENT} else "its LTS part")
        + " is left alone (LTS changes only with --lts)"
        for p in lts_rows
        if any(request.breaks(scope) for scope in p.scopes)
    ]
    return Plan(edits, changes, notes)
