"""The recipe scanner: entries, rows, inherited platforms, comments, CRLF, unknown cases."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from samples.recipes import MODEL, OTHER, RECIPES, crlf

from uvdock.errors import InputRefused
from uvdock.recipes import marks
from uvdock.recipes import parse as recipes


def _parse(text: str) -> recipes.Recipe:
    return recipes.parse(Path("x.yaml"), "x.yaml", text)


def test_entries_rows_and_lines() -> None:
    recipe = _parse(MODEL)
    assert [e.cases for e in recipe.entries] == [
        ("alpha",),
        ("beta", "gamma", "delta"),
        ("epsilon",),
    ]
    alpha = recipe.entries[0]
    assert [(r.environments, r.scopes, r.platforms) for r in alpha.rows] == [
        (("dev",), ("mr", "mr-github"), ("dgx_a100", "dgx_h100")),
        (("lts",), ("nightly",), ("dgx_a100",)),
    ]
    lines = MODEL.splitlines()
    first = alpha.rows[0]
    assert first.scope_line is not None
    assert lines[first.scope_line] == "        scope: [mr, mr-github]"
    # a row ends at its last content line: the commented-out row below is not part of it
    last = alpha.rows[1]
    assert lines[last.end - 1] == "        scope: [nightly]"
    assert lines[alpha.end - 1] == "        scope: [nightly]"
    multi = recipe.entries[1]
    assert lines[multi.end - 1] == "        time_limit: 1800"
    assert multi.rows[0].environments == ("dev", "lts")


def test_spec_platform_list_quoted_cases_column_zero_and_no_final_newline() -> None:
    recipe = _parse(OTHER)
    assert recipe.spec_platforms == ("dgx_a100", "dgx_h100")
    assert [e.cases for e in recipe.entries] == [("alpha",), ("zeta",)]
    assert recipe.entries[0].rows[0].platforms == ("dgx_a100", "dgx_h100")
    assert "platforms" not in recipe.entries[0].rows[0].keys
    assert recipe.entries[1].rows[0].end == len(OTHER.splitlines())
    assert recipe.text == OTHER


def test_crlf_parses_like_lf_and_keeps_bytes() -> None:
    lf, cr = _parse(MODEL), _parse(crlf(MODEL))
    assert [e.cases for e in cr.entries] == [e.cases for e in lf.entries]
    assert [r.platforms for e in cr.entries for r in e.rows] == [
        r.platforms for e in lf.entries for r in e.rows
    ]
    assert cr.text == crlf(MODEL)


def test_flow_list_keeps_prefix_raw_and_tail() -> None:
    parsed = recipes.flow_list("        platforms: [dgx_h100] # hang: #513")
    assert parsed is not None
    assert (parsed.prefix, parsed.raw, parsed.tail) == (
        "        platforms: [",
        "dgx_h100",
        " # hang: #513",
    )
    assert parsed.with_raw("a, b") == "        platforms: [a, b] # hang: #513"
    assert recipes.flow_list("        scope: mr") is None
    assert recipes.flow_list("  scope: [mr] trailing") is None


def test_split_marker_takes_the_first_one() -> None:
    body = "x: [a]  # uvdock-kept: x: [a, b]  # uvdock-split: x: [a, b, c]"
    assert marks.split_marker(body) == ("kept", "x: [a, b]  # uvdock-split: x: [a, b, c]")
    assert marks.split_marker("x: [a]  # note") is None


def test_placements_list_every_row_in_every_file(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({f"{RECIPES}/a/model.yaml": MODEL, f"{RECIPES}/b/other.yaml": OTHER})
    found = recipes.require_case(repo, RECIPES, "alpha")
    places = marks.placements(found, "alpha")
    assert [
        (p.path, p.line, p.environments, p.platforms, p.inherited_platforms) for p in places
    ] == [
        (f"{RECIPES}/a/model.yaml", 20, ("dev",), ("dgx_a100", "dgx_h100"), False),
        (f"{RECIPES}/a/model.yaml", 23, ("lts",), ("dgx_a100",), True),
        (f"{RECIPES}/b/other.yaml", 8, ("dev",), ("dgx_a100", "dgx_h100"), True),
    ]
    assert all(p.issue is None for p in places)


def test_unknown_case_names_the_closest(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({f"{RECIPES}/model.yaml": MODEL})
    with pytest.raises(InputRefused) as info:
        recipes.require_case(repo, RECIPES, "gama")
    assert info.value.hint is not None and "gamma" in info.value.hint
    # a case that appears only in a commented-out entry does not run anywhere
    with pytest.raises(InputRefused):
        recipes.require_case(repo, RECIPES, "omega")


def test_missing_recipes_dir_is_refused(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.md": "x\n"})
    with pytest.raises(InputRefused, match="no recipes directory"):
        recipes.load(repo, RECIPES)


def test_shared_recipes_parse(megatron_repo: Path) -> None:
    loaded = recipes.load(megatron_repo, RECIPES)
    assert recipes.all_cases(loaded) == [
        "ckpt_converter",
        "gpt_16b_perf",
        "gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_validation",
    ]
    gb200 = next(r for r in loaded if r.display.endswith("gpt-perf.yaml"))
    assert gb200.spec_platforms == ("dgx_gb200",)
    converter = marks.placements(loaded, "ckpt_converter")
    assert [(p.environments, p.scopes, p.platforms) for p in converter] == [
        (("dev",), ("mr-broken", "mr-github-broken"), ("dgx_h100",)),
        (("lts",), ("nightly-broken",), ("dgx_a100",)),
    ]


def test_a_recipe_yaml_cannot_read_is_refused_with_its_line() -> None:
    # The line scanner read this as a case named `[alpha`; Megatron-LM's loader fails on it.
    text = "products:\n  - test_case: [alpha\n    products:\n      - environment: [dev]\n"
    with pytest.raises(InputRefused, match=r"^x\.yaml:3: not valid YAML \(.*\); nothing"):
        _parse(text)
