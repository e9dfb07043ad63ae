"""mark-broken and unmark plans: exact bytes, YAML meaning, splits, CRLF, byte-exact round trips."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from samples.recipes import MODEL, OTHER, crlf, runs, unbroken, without_scopes

from uvdock.errors import InputRefused
from uvdock.recipes import mark as recipes_edit
from uvdock.recipes import mark as recipes_unmark
from uvdock.recipes import marks
from uvdock.recipes import parse as recipes
from uvdock.recipes.mark import MarkRequest


def _recipes(*texts: str) -> list[recipes.Recipe]:
    return [recipes.parse(Path(f"f{i}.yaml"), f"f{i}.yaml", t) for i, t in enumerate(texts)]


def _mark(
    texts: list[str],
    case: str,
    *,
    environments: tuple[str, ...] = (),
    platforms: tuple[str, ...] = (),
) -> list[str]:
    request = MarkRequest(case, 42, "hangs on iter 3", environments, platforms, lts=True)
    plan = recipes_edit.plan_mark(_recipes(*texts), request)
    return [e.new for e in plan.edits]


def _unmark(texts: list[str], case: str) -> list[str]:
    return [e.new for e in recipes_unmark.plan_unmark(_recipes(*texts), case).edits]


def test_mark_every_row_exact_bytes() -> None:
    (new,) = _mark([MODEL], "alpha")
    expected = MODEL.replace(
        "        scope: [mr, mr-github]\n",
        "        # Broken: hangs on iter 3 - see issue #42.\n"
        "        scope: [mr-broken, mr-github-broken]  # was: [mr, mr-github]\n",
    ).replace(
        "        scope: [nightly]\n",
        "        # Broken: hangs on iter 3 - see issue #42.\n"
        "        scope: [nightly-broken]  # was: [nightly]\n",
    )
    assert new == expected
    assert without_scopes(new) == without_scopes(MODEL)
    assert _unmark([new], "alpha") == [MODEL]


def test_platform_narrowing_splits_the_row() -> None:
    (new,) = _mark([MODEL], "alpha", platforms=("dgx_h100",))
    assert (
        "      - environment: [dev]\n"
        "        scope: [mr, mr-github]\n"
        "        platforms: [dgx_a100]  # uvdock-kept: platforms: [dgx_a100, dgx_h100]\n"
        "      - environment: [dev]\n"
        "        # Broken: hangs on iter 3 - see issue #42.\n"
        "        scope: [mr-broken, mr-github-broken]  # was: [mr, mr-github]\n"
        "        platforms: [dgx_h100]  # uvdock-split: platforms: [dgx_a100, dgx_h100]\n"
        "      - environment: [lts]\n"
        "        scope: [nightly]\n"
    ) in new
    before, after = runs(MODEL), runs(new)
    assert unbroken(after) == unbroken(before)
    assert {i for i in after if i[4]} - before == {
        ("alpha", "dev", "dgx_h100", "mr", True),
        ("alpha", "dev", "dgx_h100", "mr-github", True),
    }
    assert _unmark([new], "alpha") == [MODEL]


def test_environment_narrowing_only_touches_that_environment() -> None:
    (new,) = _mark([MODEL], "alpha", environments=("lts",))
    assert "scope: [mr, mr-github]\n" in new
    assert "scope: [nightly-broken]  # was: [nightly]\n" in new
    assert _unmark([new], "alpha") == [MODEL]


def test_multi_case_entry_is_split_and_rejoined() -> None:
    (new,) = _mark([MODEL], "gamma")
    assert (
        "  - test_case: [beta, delta]  # uvdock-kept: - test_case: [beta, gamma, delta]\n"
        "    products:\n"
        "      - environment: [dev, lts]\n"
        "        scope: [mr]\n"
        "        platforms: [dgx_h100] # hang: #513\n"
        "        time_limit: 1800\n"
        "  - test_case: [gamma]  # uvdock-split: - test_case: [beta, gamma, delta]\n"
        "    products:\n"
        "      - environment: [dev, lts]\n"
        "        # Broken: hangs on iter 3 - see issue #42.\n"
        "        scope: [mr-broken]  # was: [mr]\n"
        "        platforms: [dgx_h100] # hang: #513\n"
        "        time_limit: 1800\n"
        "  # - test_case: [omega]\n"
    ) in new
    assert {i for i in runs(new) if i[4]} - runs(MODEL) == {
        ("gamma", "dev", "dgx_h100", "mr", True),
        ("gamma", "lts", "dgx_h100", "mr", True),
    }
    assert unbroken(runs(new)) == unbroken(runs(MODEL))
    assert _unmark([new], "gamma") == [MODEL]


def test_entry_and_environment_split_together() -> None:
    (new,) = _mark([MODEL], "beta", environments=("lts",))
    assert {i for i in runs(new) if i[4]} - runs(MODEL) == {("beta", "lts", "dgx_h100", "mr", True)}
    assert unbroken(runs(new)) == unbroken(runs(MODEL))
    assert _unmark([new], "beta") == [MODEL]


def test_environment_and_platform_split_at_once_is_refused() -> None:
    text = MODEL.replace("platforms: [dgx_h100] # hang", "platforms: [dgx_a100, dgx_h100] # hang")
    with pytest.raises(InputRefused, match="environment and platform"):
        _mark([text], "beta", environments=("lts",), platforms=("dgx_h100",))


def test_inherited_platforms_get_their_own_line_and_no_final_newline_survives() -> None:
    (new,) = _mark([OTHER], "alpha", platforms=("dgx_a100",))
    assert new.endswith(
        '- test_case: ["alpha"]\n'
        "  products:\n"
        "  - environment: [dev]\n"
        "    scope: [mr-slim]\n"
        "    platforms: [dgx_h100]  # uvdock-kept: (added)\n"
        "  - environment: [dev]\n"
        "    # Broken: hangs on iter 3 - see issue #42.\n"
        "    scope: [mr-slim-broken]  # was: [mr-slim]\n"
        "    platforms: [dgx_a100]  # uvdock-split: (added)\n"
        "- test_case: [zeta]\n"
        "  products:\n"
        "  - environment: [dev]\n"
        "    scope: [nightly]\n"
        "    platforms: [dgx_gb200, dgx_h100, dgx_a100]"
    )
    assert unbroken(runs(new)) == unbroken(runs(OTHER))
    assert _unmark([new], "alpha") == [OTHER]


def test_split_at_end_of_file_without_final_newline() -> None:
    (new,) = _mark([OTHER], "zeta", platforms=("dgx_h100",))
    assert not new.endswith("\n")
    assert new.endswith(
        "platforms: [dgx_h100]  # uvdock-split: platforms: [dgx_gb200, dgx_h100, dgx_a100]"
    )
    assert _unmark([new], "zeta") == [OTHER]


def test_crlf_stays_crlf() -> None:
    text = crlf(MODEL)
    (new,) = _mark([text], "gamma", environments=("dev",))
    assert "\n" not in new.replace("\r\n", "")
    assert runs(new) == runs(_mark([MODEL], "gamma", environments=("dev",))[0])
    assert _unmark([new], "gamma") == [text]


def test_a_case_in_two_files_is_marked_in_both() -> None:
    new_model, new_other = _mark([MODEL, OTHER], "alpha", platforms=("dgx_h100",))
    assert new_model != MODEL and new_other != OTHER
    assert _unmark([new_model, new_other], "alpha") == [MODEL, OTHER]


def test_already_broken_changes_nothing() -> None:
    plan = recipes_edit.plan_mark(
        _recipes(MODEL), MarkRequest("epsilon", 1, "x", environments=("dev",))
    )
    assert plan.changes  # weekly is not broken yet
    twice = recipes_edit.plan_mark(_recipes(plan.edits[0].new), MarkRequest("epsilon", 2, "y"))
    assert not twice.changed_edits
    assert twice.notes == ["epsilon is already broken in every matching row"]


def test_partly_broken_row_keeps_its_broken_scopes() -> None:
    (new,) = _mark([MODEL], "epsilon")
    assert "scope: [weekly-broken, mr-broken]  # was: [weekly, mr-broken]\n" in new
    # unmark undoes uvdock's mark, then the hand-made `mr-broken` too: the case runs again
    assert _unmark([new], "epsilon") == [MODEL.replace("[weekly, mr-broken]", "[weekly, mr]")]


def test_no_matching_row_is_refused_with_where_it_runs() -> None:
    with pytest.raises(InputRefused, match="no row for platform dgx_gb200") as info:
        _mark([MODEL], "alpha", platforms=("dgx_gb200",))
    assert info.value.hint is not None and "f0.yaml:20" in info.value.hint


@pytest.mark.parametrize(
    ("issue", "reason"), [(0, "x"), (-3, "x"), (1, ""), (1, "a\nb"), (1, "a\r")]
)
def test_bad_issue_or_reason_is_refused(issue: int, reason: str) -> None:
    with pytest.raises(InputRefused):
        recipes_edit.plan_mark(_recipes(MODEL), MarkRequest("alpha", issue, reason))


def test_nested_row_splits_unwind() -> None:
    once = _mark([OTHER], "zeta", platforms=("dgx_h100",))
    twice = _mark(once, "zeta", platforms=("dgx_gb200",))
    assert {i[2] for i in runs(twice[0]) if i[0] == "zeta" and i[4]} == {"dgx_gb200", "dgx_h100"}
    assert {i[2] for i in runs(twice[0]) if i[0] == "zeta" and not i[4]} == {"dgx_a100"}
    assert _unmark(twice, "zeta") == [OTHER]


def test_two_cases_split_from_one_entry_unwind_in_reverse_order() -> None:
    marked = _mark(_mark([MODEL], "gamma"), "delta")
    with pytest.raises(InputRefused, match="split out of this entry later"):
        _unmark(marked, "gamma")
    assert _unmark(_unmark(marked, "delta"), "gamma") == [MODEL]


HAND_MARKED = MODEL.replace(
    "      - environment: [lts]\n        scope: [nightly]\n",
    "      - environment: [lts]\n        # Broken: OOM on H100 \u2014 see issue #5123.\n"
    "        scope: [nightly-broken, 'mr-broken']\n",
)


@pytest.mark.parametrize("dash", ["-", "\u2014", "\u2013"])
def test_unmark_undoes_hand_made_marks_with_either_dash(dash: str) -> None:
    text = HAND_MARKED.replace("\u2014", dash)
    (place,) = [p for p in marks.placements(_recipes(text), "alpha") if "lts" in p.environments]
    assert place.issue == 5123
    (new,) = _unmark([text], "alpha")
    assert new == MODEL.replace("scope: [nightly]\n", "scope: [nightly, 'mr']\n", 1)


def test_unmark_uses_a_hand_written_was_list() -> None:
    text = MODEL.replace(
        "scope: [weekly, mr-broken]", "scope: [weekly-broken] # was: [weekly, mr-github]"
    )
    (new,) = _unmark([text], "epsilon")
    assert "scope: [weekly, mr-github]\n" in new
    assert marks.placements(_recipes(new), "epsilon")[0].issue is None


def test_unmark_hand_made_scope_without_comment() -> None:
    plan = recipes_unmark.plan_unmark(_recipes(MODEL), "epsilon")
    (edit,) = plan.changed_edits
    assert edit.new == MODEL.replace("[weekly, mr-broken]", "[weekly, mr]")


def test_nothing_to_unmark_says_so() -> None:
    plan = recipes_unmark.plan_unmark(_recipes(MODEL), "alpha")
    assert not plan.changes
    assert plan.notes == ["alpha has no broken mark to undo; nothing changed"]


def test_custom_suffix() -> None:
    request = MarkRequest("alpha", 7, "oom", environments=("lts",), suffix="-flaky", lts=True)
    (edit,) = recipes_edit.plan_mark(_recipes(MODEL), request).edits
    assert "scope: [nightly-flaky]  # was: [nightly]\n" in edit.new


MARKS = st.lists(
    st.tuples(
        st.sampled_from(["alpha", "beta", "gamma", "delta", "zeta"]),
        st.sampled_from([(), ("dev",), ("lts",)]),
        st.sampled_from([(), ("dgx_a100",), ("dgx_h100",), ("dgx_gb200",)]),
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(MARKS, st.booleans())
def test_any_marks_then_unmarks_restore_the_bytes(
    marks: list[tuple[str, tuple[str, ...], tuple[str, ...]]], use_crlf: bool
) -> None:
    original = [crlf(MODEL), OTHER] if use_crlf else [MODEL, OTHER]
    texts = list(original)
    order: list[str] = []
    for case, environments, platforms in marks:
        try:
            texts = _mark(texts, case, environments=environments, platforms=platforms)
        except InputRefused:
            continue  # no such row, or a row that would split two ways
        for text, before in zip(texts, original, strict=True):
            assert unbroken(runs(text)) == unbroken(runs(before))
        if case not in order:
            order.append(case)
    for case in reversed(order):
        texts = _unmark(texts, case)
    assert texts == original


def test_scope_breaks_only_the_named_scopes() -> None:
    request = MarkRequest("alpha", 9, "flaky on github", scopes=("mr-github",))
    (edit,) = recipes_edit.plan_mark(_recipes(MODEL), request).edits
    assert "        scope: [mr, mr-github-broken]  # was: [mr, mr-github]\n" in edit.new
    assert "        scope: [nightly]\n" in edit.new  # the lts row has no mr-github
    assert _unmark([edit.new], "alpha") == [MODEL]


def test_scopes_repeat_and_combine_with_platforms() -> None:
    request = MarkRequest("alpha", 9, "oom", platforms=("dgx_h100",), scopes=("mr", "nightly"))
    (edit,) = recipes_edit.plan_mark(_recipes(MODEL), request).edits
    broken = {(r[1], r[2], r[3]) for r in runs(edit.new) if r[0] == "alpha" and r[4]}
    assert broken == {("dev", "dgx_h100", "mr")}
    assert _unmark([edit.new], "alpha") == [MODEL]


def test_scope_already_broken_is_a_note_and_unknown_scope_refused() -> None:
    once = _mark([MODEL], "alpha")
    plan = recipes_edit.plan_mark(_recipes(*once), MarkRequest("alpha", 9, "x", scopes=("mr",)))
    assert not plan.changes and "already broken in scope mr" in plan.notes[0]
    with pytest.raises(InputRefused, match="no row for scope weekly"):
        recipes_edit.plan_mark(_recipes(MODEL), MarkRequest("alpha", 9, "x", scopes=("weekly",)))


def test_a_second_scope_later_stacks_and_unwinds() -> None:
    first = recipes_edit.plan_mark(_recipes(MODEL), MarkRequest("alpha", 9, "a", scopes=("mr",)))
    text = first.edits[0].new
    second = recipes_edit.plan_mark(
        _recipes(text), MarkRequest("alpha", 10, "b", scopes=("mr-github",))
    )
    twice = second.edits[0].new
    assert "scope: [mr-broken, mr-github-broken]" in twice
    yaml_runs = {(r[1], r[2], r[3]) for r in runs(twice) if r[0] == "alpha" and r[4]}
    assert ("dev", "dgx_a100", "mr-github") in yaml_runs
    assert _unmark([twice], "alpha") == [MODEL]
