"""formats/yaml.edit_changes, the one edit verifier, read through a caller's view of the meaning.

A recipe edit splits rows (one row becomes two): compared path by path that is a change of
structure, read as runs (recipes/plan.py) it is no change at all; every other change still shows.
"""

from __future__ import annotations

import pytest

from uvdock.errors import InputRefused
from uvdock.formats.yaml import edit_changes
from uvdock.recipes.plan import Runs

OLD = (
    "products:\n  - test_case: [alpha]\n    products:\n"
    "      - environment: [dev]\n        platforms: [x, y]\n        scope: [mr]\n"
)
SPLIT = (
    "products:\n  - test_case: [alpha]\n    products:\n"
    "      - environment: [dev]\n        platforms: [x]\n        scope: [mr]\n"
    "      - environment: [dev]\n        platforms: [y]\n        scope: [mr]\n"
)


def test_a_split_row_is_a_change_of_structure_path_by_path() -> None:
    with pytest.raises(InputRefused, match=r"^x\.yaml:\d+: the edit would change the structure"):
        edit_changes("x.yaml", OLD, SPLIT)


def test_through_the_recipe_view_a_split_row_changes_nothing() -> None:
    assert edit_changes("x.yaml", OLD, SPLIT, Runs()).changed == {}


def test_through_the_view_a_moved_scope_still_shows_with_its_row_line() -> None:
    broken = SPLIT[: SPLIT.rindex("[mr]")] + "[mr-broken]\n"
    edit = edit_changes("x.yaml", OLD, broken, Runs())
    assert [(was.line, was.value) for was in edit.changed.values()] == [(4, "mr")]
    assert [edit.after[path].value for path in edit.changed] == ["mr-broken"]


def test_through_the_view_a_new_run_is_refused() -> None:
    more = SPLIT.replace("scope: [mr]\n", "scope: [mr, nightly]\n", 1)
    with pytest.raises(InputRefused, match=r"^x\.yaml:\d+: the edit would change the structure"):
        edit_changes("x.yaml", OLD, more, Runs())


def test_the_view_can_leave_runs_out() -> None:
    """unmark: the case's own runs may get any scopes back; everything else is compared."""
    more = SPLIT.replace("scope: [mr]\n", "scope: [mr, nightly]\n", 1)
    assert edit_changes("x.yaml", OLD, more, Runs(lambda case, env: case == "alpha")).changed == {}
