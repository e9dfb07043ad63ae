"""`recipe mark-broken` as an edit plan over the recipe lines (recipes/unmark.py undoes it).

A mark replaces a row's scopes by their broken forms, puts `# Broken: REASON - see issue #N.`
above the scope line and `  # was: [OLD]` at its end. When only some of a row's platforms
(or environments) are selected, the row is split: the original keeps the others, marked
`# uvdock-kept: ORIGINAL LINE`, and a copy with the selected ones follows it, marked
`# uvdock-split: ORIGINAL LINE`. An entry that lists several cases is split the same way on
its `test_case` line. The markers carry the exact original line, so unmark restores the bytes.

The steps run through recipes/plan.py, which unmark shares.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.files.edit import FileEdit
from uvdock.files.textlines import ending_of
from uvdock.recipes.marks import (
    ADDED,
    KEPT_MARKER,
    SPLIT_MARKER,
    Placement,
    placements,
)
from uvdock.recipes.parse import (
    Entry,
    FlowList,
    Recipe,
    Row,
    body_of,
    flow_list,
    indent_of,
)
from uvdock.recipes.plan import Change, Plan, replace_span, run_steps
from uvdock.recipes.runs import LTS_ENVIRONMENT, Asked, Runs, Who, verify_edit


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
        """Whether this request breaks `scope` (an unbroken scope name)."""
        return not scope.endswith(self.suffix) and (not self.scopes or scope in self.scopes)


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


def validate(issue: int, reason: str) -> None:
    if issue <= 0:
        raise InputRefused(f"--issue {issue}: expected a positive issue number")
    if not reason.strip():
        raise InputRefused("--reason is empty: say why the test is broken")
    bad = next((ch for ch in reason if _unsafe_in_comment(ch)), None)
    if bad is not None:
        raise InputRefused(
            f"--reason holds the control character U+{ord(bad):04X}: it must be one line of"
            " printable text (it becomes a YAML comment)",
            hint="retype the reason without pasted control characters",
        )


def _unsafe_in_comment(ch: str) -> bool:
    """C0 and C1 controls (tab, CR and the \\x1c-\\x1e separators included), DEL, YAML's
    other line breaks, and what YAML readers reject as non-printable (lone surrogates from
    undecodable argv bytes, U+FFFE/U+FFFF) or drop silently (a BOM)."""
    code = ord(ch)
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF)
        or 0xD800 <= code <= 0xDFFF
    )


def _user_tail(tail: str) -> str:
    """A flow list's tail without uvdock's split markers (they are rebuilt, not repeated)."""
    cut = [p for p in (tail.find(KEPT_MARKER), tail.find(SPLIT_MARKER)) if p >= 0]
    return tail[: min(cut)] if cut else tail


def _flow(recipe: Recipe, index: int) -> FlowList:
    parsed = flow_list(body_of(recipe.lines[index]))
    if parsed is None:
        raise InputRefused(
            f"{recipe.display}:{index + 1}: expected a one-line [list]; edit this line by hand"
        )
    return parsed


def _rebuilt(parsed: FlowList, keep: Sequence[str], marker: str, original: str) -> str:
    raw = ", ".join(
        r for item, r in zip(parsed.items, parsed.raw_items, strict=True) if item in keep
    )
    return parsed.with_raw(raw, _user_tail(parsed.tail)) + marker + original


def _split_lines(
    recipe: Recipe, index: int, keep: Sequence[str], selected: Sequence[str]
) -> tuple[str, str]:
    line = recipe.lines[index]
    parsed = _flow(recipe, index)
    original = body_of(line)[indent_of(line) :]
    eol = ending_of(line)
    return (
        _rebuilt(parsed, keep, KEPT_MARKER, original) + eol,
        _rebuilt(parsed, selected, SPLIT_MARKER, original) + eol,
    )


def _split_entry(recipe: Recipe, lines: list[str], entry: Entry, case: str) -> Change:
    rest = [c for c in entry.cases if c != case]
    kept_line, split_line = _split_lines(recipe, entry.case_line, rest, [case])
    block = lines[entry.start : entry.end]
    offset = entry.case_line - entry.start
    kept = [*block[:offset], kept_line, *block[offset + 1 :]]
    split = [*block[:offset], split_line, *block[offset + 1 :]]
    replace_span(lines, entry.start, entry.end, kept + split)
    return Change(
        recipe.display,
        entry.start + len(kept) + 1,
        f"split {case} out of [{', '.join(entry.cases)}]",
    )


def _split_row(
    recipe: Recipe,
    lines: list[str],
    row: Row,
    key: str,
    values: Sequence[str],
    selected: Sequence[str],
) -> Change:
    rest = [v for v in values if v not in selected]
    block = lines[row.start : row.end]
    index = row.keys.get(key)
    if index is None:  # platforms inherited from the spec: both halves get their own line
        head = f"{' ' * row.key_column}{key}: "
        kept = [*block, f"{head}[{', '.join(rest)}]{KEPT_MARKER}{ADDED}"]
        split = [*block, f"{head}[{', '.join(selected)}]{SPLIT_MARKER}{ADDED}"]
    else:
        kept_line, split_line = _split_lines(recipe, index, rest, selected)
        offset = index - row.start
        kept = [*block[:offset], kept_line, *block[offset + 1 :]]
        split = [*block[:offset], split_line, *block[offset + 1 :]]
    replace_span(lines, row.start, row.end, kept + split)
    return Change(
        recipe.display,
        row.start + len(kept) + 1,
        f"split {key} [{', '.join(values)}]: [{', '.join(selected)}] apart",
    )


def _broken_raw(raw: str, suffix: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[:-1] + suffix + raw[-1]
    return raw + suffix


def _mark_row(recipe: Recipe, lines: list[str], row: Row, request: MarkRequest) -> Change:
    index = row.scope_line
    assert index is not None
    line = recipe.lines[index]
    parsed = _flow(recipe, index)
    new_raw = ", ".join(
        _broken_raw(raw, request.suffix) if request.breaks(item) else raw
        for item, raw in zip(parsed.items, parsed.raw_items, strict=True)
    )
    comment = f"{' ' * indent_of(line)}# Broken: {request.reason} - see issue #{request.issue}."
    scope = f"{parsed.with_raw(new_raw)}  # was: [{parsed.raw}]"
    replace_span(lines, index, index + 1, [comment + ending_of(line), scope + ending_of(line)])
    return Change(recipe.display, index + 2, f"scope [{parsed.raw}] -> [{new_raw}]")


def _selected(values: tuple[str, ...], wanted: tuple[str, ...]) -> tuple[str, ...]:
    return values if not wanted else tuple(v for v in values if v in wanted)


def _mark_step(recipe: Recipe, lines: list[str], request: MarkRequest) -> Change | None:
    for entry in recipe.entries_of(request.case):
        for row in entry.rows:
            environments = _selected(row.environments, request.environments)
            if not request.lts:
                environments = tuple(e for e in environments if e != LTS_ENVIRONMENT)
                if row.environments and not environments:
                    continue  # an LTS-only row: never touched without --lts
            platforms = _selected(row.platforms, request.platforms)
            if (request.environments and not environments) or (request.platforms and not platforms):
                continue
            if row.scope_line is None or not any(request.breaks(s) for s in row.scopes):
                continue
            if len(entry.cases) > 1:
                return _split_entry(recipe, lines, entry, request.case)
            split_env = len(environments) < len(row.environments)
            split_platform = len(platforms) < len(row.platforms)
            if split_env and split_platform:
                raise InputRefused(
                    f"{recipe.display}:{row.start + 1}: the row would split on both environment"
                    " and platform",
                    hint="narrow with --environment or with --platform, one at a time",
                )
            if split_platform:
                return _split_row(recipe, lines, row, "platforms", row.platforms, platforms)
            if split_env:
                return _split_row(recipe, lines, row, "environment", row.environments, environments)
            return _mark_row(recipe, lines, row, request)
    return None


def _filters_text(request: MarkRequest) -> str:
    parts = [f"environment {', '.join(request.environments)}"] if request.environments else []
    parts += [f"platform {', '.join(request.platforms)}"] if request.platforms else []
    parts += [f"scope {', '.join(request.scopes)}"] if request.scopes else []
    return " and ".join(parts)


def _base(scope: str, suffix: str) -> str:
    return scope[: -len(suffix)] if scope.endswith(suffix) and scope != suffix else scope


def _asked(request: MarkRequest) -> Asked:
    def asked(who: Who, scope: str) -> bool:
        case, environment, platform = who
        return (
            case == request.case
            and request.breaks(scope)
            and (not request.environments or environment in request.environments)
            and (request.lts or environment != LTS_ENVIRONMENT)
            and (not request.platforms or platform in request.platforms)
        )

    return asked


def _refuse_empty_scopes(request: MarkRequest, matching: Sequence[Placement]) -> None:
    """`scope: []` runs nowhere: nothing to break is no "already broken"."""
    empty = [p for p in matching if not p.scopes]
    if empty and len(empty) == len(matching):
        place = empty[0]
        raise InputRefused(
            f"{place.path}:{place.line}: {request.case} has an empty scope list here (`scope: []`):"
            " it runs in no scope, so there is nothing to mark broken; nothing was changed"
        )


def plan_mark(recipes: Sequence[Recipe], request: MarkRequest) -> Plan:
    """Mark every matching row of `request.case` broken. Refuses when no row matches the filters."""
    validate(request.issue, request.reason)
    runs = placements(recipes, request.case)
    matching = [
        p
        for p in runs
        if (not request.environments or set(p.environments) & set(request.environments))
        and (not request.platforms or set(p.platforms) & set(request.platforms))
        and (
            not request.scopes or {_base(s, request.suffix) for s in p.scopes} & set(request.scopes)
        )
    ]
    if not matching:
        where = "; ".join(
            f"{p.path}:{p.line} [{', '.join(p.environments)}] on [{', '.join(p.platforms)}]"
            + (f" in [{', '.join(p.scopes)}]" if request.scopes else "")
            for p in runs
        )
        raise InputRefused(
            f"{request.case} has no row for {_filters_text(request)}", hint=f"it runs: {where}"
        )
    edits: list[FileEdit] = []
    changes: list[Change] = []
    for recipe in recipes:
        edit, done = run_steps(recipe, lambda r, lines: _mark_step(r, lines, request))
        verify_edit(recipe.display, edit.old, edit.new, _asked(request), Runs(), request.suffix)
        edits.append(edit)
        changes.extend(done)
    if not changes:
        _refuse_empty_scopes(request, matching)
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
