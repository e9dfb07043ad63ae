"""Recipe texts shared by the recipe tests and the recipe commands' tests, and the YAML-level
readings (every place a case runs, the document without scopes) the tests compare with."""

from __future__ import annotations

from typing import Any

import yaml

RECIPES = "tests/test_utils/recipes"

# Banner comments, a block scalar holding "products:" and "#" lines, several rows per case,
# a multi-platform row, inherited platforms, a multi-case entry with several environments,
# commented-out rows and entries, an already broken row.
MODEL = """\
# Functional tests of the imaginary model.
# Keep the banners: people read them.
type: basic
format_version: 1
maintainers: [mcore]
spec:
  name: "{test_case}_{environment}_{platforms}"
  platforms: dgx_a100
  script: |-
    # products: this is not a key
    products:
    echo hi
products:
  #######################################################################
  # Nightly tests                                                       #
  #######################################################################
  - test_case: [alpha]
    products:
      - environment: [dev]
        scope: [mr, mr-github]
        platforms: [dgx_a100, dgx_h100]
      - environment: [lts]
        scope: [nightly]
      # - environment: [dev]
      #   scope: [mr] # Hangs: #513
  - test_case: [beta, gamma, delta]
    products:
      - environment: [dev, lts]
        scope: [mr]
        platforms: [dgx_h100] # hang: #513
        time_limit: 1800
  # - test_case: [omega]
  #   products:
  #     - environment: [dev]
  #       scope: [mr]
  - test_case: [epsilon]
    products:
      - environment: [dev]
        scope: [weekly, mr-broken]
"""

# The same case as MODEL on other platforms; the spec lists two platforms, one row inherits
# them; entries at column 0 under products; no final newline.
OTHER = """\
type: basic
spec:
  platforms: [dgx_a100, dgx_h100]
products:
- test_case: ["alpha"]
  products:
  - environment: [dev]
    scope: [mr-slim]
- test_case: [zeta]
  products:
  - environment: [dev]
    scope: [nightly]
    platforms: [dgx_gb200, dgx_h100, dgx_a100]"""


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def runs(text: str, suffix: str = "-broken") -> set[tuple[str, str, str, str, bool]]:
    """(case, environment, platform, scope without suffix, broken) for every place a case runs."""
    doc: dict[str, Any] = yaml.safe_load(text)
    spec_platforms = doc["spec"].get("platforms", [])
    if isinstance(spec_platforms, str):
        spec_platforms = [spec_platforms]
    found: set[tuple[str, str, str, str, bool]] = set()
    for entry in doc["products"]:
        for row in entry["products"]:
            for case in entry["test_case"]:
                for env in row["environment"]:
                    for platform in row.get("platforms", spec_platforms):
                        for scope in row["scope"]:
                            broken = scope.endswith(suffix)
                            plain = scope[: -len(suffix)] if broken else scope
                            found.add((case, env, platform, plain, broken))
    return found


def without_scopes(text: str) -> Any:
    """The parsed document with every scope list dropped: what a mark must not change."""
    doc: Any = yaml.safe_load(text)
    for entry in doc["products"]:
        for row in entry["products"]:
            row.pop("scope")
    return doc


def unbroken(found: set[tuple[str, str, str, str, bool]]) -> set[tuple[str, str, str, str]]:
    return {item[:4] for item in found}
