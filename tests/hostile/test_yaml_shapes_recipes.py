"""Issue 20 item 6, test recipes: `mark-broken` / `unmark` edit what YAML reads, or refuse.

Each recipe is a YAML shape the line editor used to get wrong with exit 0. After the command,
PyYAML reads the result: exactly the asked runs moved to (or back from) their broken scope and
nothing else changed; or the command refused (exit 2, naming file and line) and the file is
byte for byte what it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import RunCli

RECIPE = "tests/test_utils/recipes/h100/model.yaml"
HEAD = "type: basic\nformat_version: 1\nspec:\n  name: x\n  platforms: [dgx_h100]\n"
Run = tuple[str, Any, Any, str]


def _runs(text: str) -> Counter[Run]:
    """(case, environment, platform, scope) of every run, as PyYAML reads the recipe."""
    data = yaml.safe_load(text)
    spec_platforms = data["spec"].get("platforms", [])
    found: Counter[Run] = Counter()
    for entry in data["products"]:
        for row in entry["products"]:
            for case in entry["test_case"]:
                for env in row.get("environment", [None]):
                    for platform in row.get("platforms", spec_platforms):
                        for scope in row.get("scope") or [None]:
                            found[(case, env, platform, scope)] += 1
    return found


def _marked(runs: Counter[Run], case: str) -> Counter[Run]:
    return Counter(
        {
            (c, e, p, s + "-broken" if c == case and s and not s.endswith("-broken") else s): n
            for (c, e, p, s), n in runs.items()
        }
    )


def _mark(case: str) -> list[str]:
    return ["recipe", "mark-broken", case, "--issue", "7", "--reason", "hangs"]


EDITED: list[tuple[str, str, list[str], Callable[[Counter[Run]], Counter[Run]]]] = [
    (
        "comma-inside-a-quoted-scope",
        HEAD + "products:\n  - test_case: [alpha]\n    products:\n"
        '      - environment: [dev]\n        scope: ["mr,x", nightly]\n',
        _mark("alpha"),
        lambda runs: _marked(runs, "alpha"),
    ),
    (
        "duplicate-scope-key-last-wins",
        HEAD + "products:\n  - test_case: [alpha]\n    products:\n"
        "      - environment: [dev]\n        scope: [nightly]\n        scope: [mr]\n",
        _mark("alpha"),
        lambda runs: _marked(runs, "alpha"),
    ),
    (
        "two-products-blocks-last-wins",
        HEAD + "products:\n  - test_case: [alpha]\n    products:\n"
        "      - environment: [dev]\n        scope: [nightly]\n"
        "products:\n  - test_case: [alpha]\n    products:\n"
        "      - environment: [dev]\n        scope: [mr]\n",
        _mark("alpha"),
        lambda runs: _marked(runs, "alpha"),
    ),
]

ANCHORED = (
    HEAD + "products:\n  - test_case: [alpha]\n    products:\n"
    "      - environment: [dev]\n        scope: &sc [mr]\n"
    "  - test_case: [beta]\n    products:\n"
    "      - environment: [dev]\n        scope: *sc\n"
)
REFUSED = [
    ("anchored-scope-aliased-by-another-case", ANCHORED, _mark("alpha"), 13),
    (
        "anchored-broken-scope-unmark",
        ANCHORED.replace("&sc [mr]", "&sc [mr-broken]"),
        ["recipe", "unmark", "alpha"],
        13,
    ),
    (
        "flow-mapping-row",
        HEAD + "products:\n  - test_case: [alpha]\n    products:\n"
        "      - {environment: [dev], scope: [mr]}\n",
        _mark("alpha"),
        9,
    ),
    (
        "merge-key-row",
        HEAD + ".row: &row\n  environment: [dev]\n  scope: [mr]\n"
        "products:\n  - test_case: [alpha]\n    products:\n"
        "      - <<: *row\n        time_limit: 10\n",
        _mark("alpha"),
        12,
    ),
    (
        "empty-scope",
        HEAD + "products:\n  - test_case: [alpha]\n    products:\n"
        "      - environment: [dev]\n        scope: []\n",
        _mark("alpha"),
        10,
    ),
]


@pytest.mark.parametrize(
    ("text", "command", "expected"), [c[1:] for c in EDITED], ids=[c[0] for c in EDITED]
)
def test_edit_is_what_yaml_reads(
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    text: str,
    command: list[str],
    expected: Callable[[Counter[Run]], Counter[Run]],
) -> None:
    repo = make_repo({RECIPE: text})
    result = run_cli("--repo", repo, *command)
    assert result.code == 0, result.err
    after = (repo / RECIPE).read_text()
    assert _runs(after) == expected(_runs(text)) != _runs(text)
    back = run_cli("--repo", repo, "recipe", "unmark", command[2])
    assert back.code == 0, back.err
    assert (repo / RECIPE).read_text() == text  # byte for byte


@pytest.mark.parametrize(
    ("text", "command", "line"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_shapes_the_editor_cannot_edit_are_refused(
    make_repo: Callable[..., Path], run_cli: RunCli, text: str, command: list[str], line: int
) -> None:
    yaml.safe_load(text)  # a real YAML shape
    repo = make_repo({RECIPE: text})
    result = run_cli("--repo", repo, *command)
    assert result.code == 2, result.out + result.err
    assert result.err.startswith(f"error: {RECIPE}:{line}: "), result.err
    assert "nothing was changed" in result.err
    assert (repo / RECIPE).read_text() == text
