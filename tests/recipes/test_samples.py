"""The recipe samples in tests/samples/recipes.py are valid YAML and say what the tests rely on."""

from __future__ import annotations

from samples.recipes import MODEL, OTHER, crlf, runs, unbroken, without_scopes


def test_samples_are_yaml_and_list_what_the_tests_rely_on() -> None:
    model = runs(MODEL)
    assert ("alpha", "dev", "dgx_h100", "mr-github", False) in model
    assert ("alpha", "lts", "dgx_a100", "nightly", False) in model  # inherited scalar
    assert ("epsilon", "dev", "dgx_a100", "mr", True) in model
    assert not any(item[0] == "omega" for item in model)  # commented out
    other = runs(OTHER)
    assert {i[2] for i in other if i[0] == "alpha"} == {"dgx_a100", "dgx_h100"}
    assert runs(crlf(MODEL)) == model


def test_runs_sees_a_scope_change() -> None:
    changed = MODEL.replace("scope: [nightly]", "scope: [nightly-broken]")
    assert runs(changed) != runs(MODEL)
    assert unbroken(runs(changed)) == unbroken(runs(MODEL))
    assert without_scopes(changed) == without_scopes(MODEL)
