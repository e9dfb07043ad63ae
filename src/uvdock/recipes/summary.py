"""`recipe show` without a case: every case, its files, and its scopes per environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from uvdock.recipes.parse import Recipe, all_cases


class CaseSummary(NamedTuple):
    """One case for `recipe show` without a case: its files, and its scopes per environment."""

    case: str
    files: tuple[str, ...]
    scopes: dict[str, tuple[str, ...]]  # environment -> scopes, in file order, each once

    def as_json(self) -> dict[str, object]:
        return {
            "case": self.case,
            "files": list(self.files),
            "scopes": {env: list(scopes) for env, scopes in self.scopes.items()},
        }


def case_summaries(recipes: Sequence[Recipe]) -> list[CaseSummary]:
    """One pass over every entry (asking each case's placements would be quadratic: a recipe
    tree of 8000 cases took seconds)."""
    files: dict[str, dict[str, None]] = {}
    scopes: dict[str, dict[str, dict[str, None]]] = {}
    for recipe in recipes:
        for entry in recipe.entries:
            for case in entry.cases:
                files.setdefault(case, {}).setdefault(recipe.display)
                per_environment = scopes.setdefault(case, {})
                for row in entry.rows:
                    for environment in row.environments or ("",):
                        per_environment.setdefault(environment, {}).update(
                            dict.fromkeys(row.scopes)
                        )
    return [
        CaseSummary(case, tuple(files[case]), {e: tuple(s) for e, s in scopes[case].items()})
        for case in all_cases(recipes)
    ]
