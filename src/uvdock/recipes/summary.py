"""`recipe show` without a case: every case, its files, and its scopes per environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from uvdock.recipes.parse import Recipe, all_cases, placements


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
    summaries = []
    for case in all_cases(recipes):
        files: dict[str, None] = {}
        scopes: dict[str, dict[str, None]] = {}
        for place in placements(recipes, case):
            files.setdefault(place.path)
            for environment in place.environments or ("",):
                scopes.setdefault(environment, {}).update(dict.fromkeys(place.scopes))
        summaries.append(CaseSummary(case, tuple(files), {e: tuple(s) for e, s in scopes.items()}))
    return summaries
