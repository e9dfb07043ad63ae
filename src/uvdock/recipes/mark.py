"""`recipe mark-broken` and `recipe unmark` as edit plans over the recipe lines.

A mark puts `# Broken: REASON - see issue #N.` above the scope line, the broken scopes on it and
`  # was: [OLD]` at its end. A row (or an entry of several cases) only partly selected is split:
the original keeps the rest (`# uvdock-kept: LINE`), a copy with the selected follows
(`# uvdock-split: LINE`); the markers carry the original line. Unmark restores the original
bytes one step at a time: entry splits, then row splits, then scopes from `# was:`. Marks made
by hand go too: broken scopes back to their base names (or the `# was: [...]` list), with the
`# Broken: ... see issue #N.` comment above the row (any dash).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.files.textlines import ending_of
from uvdock.recipes import marks
from uvdock.recipes.marks import ADDED, KEPT_MARKER, SPLIT_MARKER, broken, placements, unbroken
from uvdock.recipes.parse import Entry, FlowList, Recipe, Row, body_of, flow_list, indent_of, parse
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

    def takes(self, environment: str | None) -> bool:  # LTS only with the opt-in
        envs = self.environments
        return (not envs or environment in envs) and (self.lts or environment != LTS_ENVIRONMENT)

    def on(self, platform: str | None) -> bool:
        return not self.platforms or platform in self.platforms

    def asks(self, who: Who, scope: str) -> bool:  # must `scope` be broken after the edit
        case, env, platform = who
        return case == self.case and self.breaks(scope) and self.takes(env) and self.on(platform)


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
    if bad := _UNSAFE_IN_COMMENT.search(reason):
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
    what: str,
) -> Change:
    """The block twice, the others of `values` on line `index` in the first copy and the
    `selected` ones in the second (platforms from the spec get a line of their own in each)."""
    halves, kept = [], [v for v in values if v not in selected]
    for marker, keep in ((KEPT_MARKER, kept), (SPLIT_MARKER, selected)):
        body = lines[block.start : block.end]
        if index is None:
            body.append(f"{' ' * block.key_column}platforms: [{', '.join(keep)}]{marker}{ADDED}")
        else:
            line, parsed = recipe.lines[index], _flow(recipe, index)
            raw = ", ".join(r for i, r in parsed.pairs if i in keep)
            # the tail up to the first marker: the markers are rebuilt, not repeated
            tail = marks.SPLIT_MARKERS.split(parsed.tail, maxsplit=1)[0]
            new = parsed.with_raw(raw, tail) + marker + body_of(line)[indent_of(line) :]
            body[index - block.start] = new + ending_of(line)
        halves.append(body)
    replace_span(lines, block.start, block.end, halves[0] + halves[1])
    return Change(recipe.display, block.start + len(halves[0]) + 1, what)


def _mark_row(recipe: Recipe, lines: list[str], row: Row, request: MarkRequest) -> Change:
    index = row.scope_line
    assert index is not None
    line, parsed = recipe.lines[index], _flow(recipe, index)
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
            envs = tuple(filter(request.takes, row.environments))
            plats = tuple(filter(request.on, row.platforms))
            if (request.environments or row.environments) and not envs:
                continue  # none of the asked environments, or an LTS-only row without --lts
            if (request.platforms and not plats) or not any(map(request.breaks, row.scopes)):
                continue  # (no scope line: no scopes)
            if len(entry.cases) > 1:
                cases, what = entry.cases, f"split {request.case} out of [{', '.join(entry.cases)}]"
                return _split(recipe, lines, entry, entry.case_line, cases, [request.case], what)
            by_key = {"platforms": (row.platforms, plats), "environment": (row.environments, envs)}
            splits = [key for key, (have, kept) in by_key.items() if len(kept) < len(have)]
            if len(splits) > 1:
                raise InputRefused(
                    f"{recipe.display}:{row.start + 1}: the row would split on both environment"
                    " and platform",
                    hint="narrow with --environment or with --platform, one at a time",
                )
            if not splits:
                return _mark_row(recipe, lines, row, request)
            key, (values, selected) = splits[0], by_key[splits[0]]
            what = f"split {key} [{', '.join(values)}]: [{', '.join(selected)}] apart"
            return _split(recipe, lines, row, row.keys.get(key), values, selected, what)
    return None


def plan_mark(recipes: Sequence[Recipe], request: MarkRequest) -> Plan:
    """Mark every matching row of `request.case` broken. Refuses when no row matches the filters."""
    validate(request.issue, request.reason)
    runs = placements(recipes, request.case)
    filters = dict(
        environment=request.environments, platform=request.platforms, scope=request.scopes
    )

    def fits(p: marks.Placement) -> bool:
        have = (p.environments, p.platforms, [unbroken(s, request.suffix) for s in p.scopes])
        return all(not w or set(h) & set(w) for h, w in zip(have, filters.values(), strict=True))

    matching = [p for p in runs if fits(p)]
    if not matching:
        where = "; ".join(
            f"{p.path}:{p.line} [{', '.join(p.environments)}] on [{', '.join(p.platforms)}]"
            + (f" in [{', '.join(p.scopes)}]" if request.scopes else "")
            for p in runs
        )
        asked = " and ".join(f"{name} {', '.join(v)}" for name, v in filters.items() if v)
        raise InputRefused(f"{request.case} has no row for {asked}", hint=f"it runs: {where}")
    step = functools.partial(_mark_step, request=request)
    edits, changes = run_steps(recipes, step, request.asks, request.suffix)
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


def _marker(recipe: Recipe, index: int | None) -> tuple[str, str] | None:
    return None if index is None else marks.split_marker(body_of(recipe.lines[index]))


def _join(lines: list[str], split: Entry | Row, kept: int, original: str) -> None:
    """Drop the split copy, and put the kept one's marked line back as it was."""
    replace_span(lines, split.start, split.end, [])
    restored = " " * indent_of(lines[kept]) + original + ending_of(lines[kept])
    replace_span(lines, kept, kept + 1, [] if original == ADDED else [restored])


def _undo_entry_split(
    recipe: Recipe, lines: list[str], entries: Sequence[Entry], at: int, original: str
) -> Change:
    split = entries[at]
    where = f"{recipe.display}:{split.case_line + 1}"
    for kept in reversed(entries[:at]):
        marker = _marker(recipe, kept.case_line)
        if marker is None:
            break
        if marker[0] == "split":
            continue  # another case split out of the same entry later sits in between
        if marker[1] != original:
            later = ", ".join(kept.cases)
            raise InputRefused(
                f"{where}: a case was split out of this entry later",
                hint=f"unmark the case(s) split after it first (the entry now holds [{later}])",
            )
        _join(lines, split, kept.case_line, original)
        what = f"joined {split.cases[0]} back into its entry"
        return Change(recipe.display, kept.case_line + 1, what)
    raise InputRefused(f"{where}: the entry it was split from is gone")


def _unmark_row(
    recipe: Recipe, lines: list[str], row: Row, suffix: str, lts: bool
) -> Change | None:
    """Undo one row's mark: uvdock's exactly, a hand-made one by the team's convention."""
    index = row.scope_line
    in_lts = not lts and LTS_ENVIRONMENT in row.environments  # its scope changes only with --lts
    if index is None or in_lts or not marks.is_marked(recipe, row, suffix):
        return None
    body = body_of(line := recipe.lines[index])
    was = marks.WAS_SUFFIX.match(body) or marks.LOOSE_WAS_SUFFIX.match(body)
    parsed = flow_list(was["rest"] if was else body)
    if parsed is None:
        return None  # a block-style scope list: not something to rewrite safely
    restored_raw = was["old"] if was else ", ".join(unbroken(r, suffix) for r in parsed.raw_items)
    if not was and restored_raw == ", ".join(parsed.raw_items):
        return None  # every scope is the bare suffix: nothing to take it off
    comment = marks.broken_comment_line(recipe, row)  # above the scope line when found
    replace_span(lines, index, index + 1, [parsed.with_raw(restored_raw) + ending_of(line)])
    if comment is not None:
        replace_span(lines, comment, comment + 1, [])
    line_number = index + (comment is None)
    return Change(recipe.display, line_number, f"scope [{parsed.raw}] -> [{restored_raw}]")


def _unmark_step(
    recipe: Recipe, lines: list[str], case: str, suffix: str, lts: bool
) -> Change | None:
    for at, entry in enumerate(recipe.entries):
        marker = _marker(recipe, entry.case_line)
        if entry.cases == (case,) and marker is not None and marker[0] == "split":
            return _undo_entry_split(recipe, lines, recipe.entries, at, marker[1])
    own = recipe.entries_of(case)
    for rows in (entry.rows for entry in own):
        for at, row in enumerate(rows):
            for key in ("platforms", "environment"):
                marker = _marker(recipe, row.keys.get(key))
                if marker is None or marker[0] != "split":
                    continue
                kept = rows[at - 1].keys.get(key) if at > 0 else None
                if kept is None or _marker(recipe, kept) != ("kept", marker[1]):
                    where = f"{recipe.display}:{row.start + 1}"
                    raise InputRefused(f"{where}: the row it was split from changed")
                _join(lines, row, kept, marker[1])
                return Change(recipe.display, row.start + 1, f"joined the {key} split back")
    every = (row for entry in own for row in entry.rows)
    return next(filter(None, (_unmark_row(recipe, lines, r, suffix, lts) for r in every)), None)


def plan_unmark(
    recipes: Sequence[Recipe], case: str, suffix: str = "-broken", *, lts: bool = True
) -> Plan:
    """Undo every mark of `case`; without `lts` (the opt-in) an LTS row keeps its mark."""

    def others(c: str, env: str | None) -> bool:  # every run but the case's own stays as it was
        return c == case and (lts or env != LTS_ENVIRONMENT)

    step = functools.partial(_unmark_step, case=case, suffix=suffix, lts=lts)
    edits, changes = run_steps(recipes, step, lambda who, scope: False, suffix, others)
    notes = [] if changes else [f"{case} has no broken mark to undo; nothing changed"]
    for place in placements([parse(e.path, e.name, e.new) for e in edits], case):
        if any(s.endswith(suffix) for s in place.scopes):
            if not lts and LTS_ENVIRONMENT in place.environments:
                why = "an LTS row; left as is without --lts"
            else:
                why = f"[{', '.join(place.scopes)}] is still broken (not a one-line scope list"
                why += " uvdock can rewrite); left as is"
            notes.append(f"{place.path}:{place.line}: {why}")
    return Plan(edits, changes, notes)
