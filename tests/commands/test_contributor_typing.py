"""Issue 21, items 4, 5 and 10, on a git copy of the real Megatron-LM files: LTS recipe rows are
opt-in, a bump that looks like an LTS bump says --lts first, and what people type is understood."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli
from samples.pins import snapshot

CKPT = "tests/test_utils/recipes/h100/ckpt_converter.yaml"


def _unbroken(repo: Path, run_cli: RunCli) -> Path:
    """The copy with every ckpt_converter mark undone (dev [mr, mr-github], lts [nightly])."""
    result = run_cli("--repo", repo, "recipe", "unmark", "ckpt_converter", "--lts")
    assert result.code == 0, result.err
    text = (repo / CKPT).read_text()
    assert "scope: [mr, mr-github]" in text and "scope: [nightly]" in text
    return repo


def test_mark_broken_without_lts_leaves_lts_rows(megatron_repo: Path, run_cli: RunCli) -> None:
    repo = _unbroken(megatron_repo, run_cli)
    result = run_cli(
        "--repo", repo, "recipe", "mark-broken", "ckpt_converter", "--issue", "7", "--reason", "x"
    )
    assert result.code == 0, result.err
    text = (repo / CKPT).read_text()
    assert "scope: [mr-broken, mr-github-broken]  # was: [mr, mr-github]" in text
    assert "scope: [nightly]\n" in text  # the LTS row is untouched
    assert "left alone (LTS changes only with --lts)" in result.out


def test_mark_broken_lts_rows_need_lts(megatron_repo: Path, run_cli: RunCli) -> None:
    repo = _unbroken(megatron_repo, run_cli)
    before = snapshot(repo)
    words = ["recipe", "mark-broken", "ckpt_converter", "--issue", "7", "--reason", "x"]
    refused = run_cli("--repo", repo, *words, "--environment", "lts")
    assert refused.code == 2
    assert "re-run with --lts" in refused.err and "--environment lts --lts" in refused.err
    assert snapshot(repo) == before
    opted = run_cli("--repo", repo, *words, "--environment", "lts", "--lts")
    assert opted.code == 0, opted.err
    assert "scope: [nightly-broken]  # was: [nightly]" in (repo / CKPT).read_text()


def test_unmark_without_lts_keeps_lts_marks(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "recipe", "unmark", "ckpt_converter")
    assert result.code == 0, result.err
    text = (megatron_repo / CKPT).read_text()
    assert "scope: [mr, mr-github]" in text and "scope: [nightly-broken]" in text
    # Only the LTS mark is left: unmark refuses without the opt-in.
    before = snapshot(megatron_repo)
    again = run_cli("--repo", megatron_repo, "recipe", "unmark", "ckpt_converter")
    assert again.code == 2 and "re-run with --lts" in again.err
    assert snapshot(megatron_repo) == before


@pytest.mark.parametrize(
    "issue",
    [
        "#4321",
        "4321",
        "https://github.com/NVIDIA/Megatron-LM/issues/4321",
        "https://gitlab.example.com/adlr/megatron-lm/-/issues/4321/",
        "https://github.com/NVIDIA/Megatron-LM/issues/4321#issuecomment-1",
    ],
)
def test_issue_as_people_paste_it(megatron_repo: Path, run_cli: RunCli, issue: str) -> None:
    repo = _unbroken(megatron_repo, run_cli)
    result = run_cli(
        "--repo", repo, "recipe", "mark-broken", "ckpt_converter", "--issue", issue, "--reason", "x"
    )
    assert result.code == 0, result.err
    assert "# Broken: x - see issue #4321." in (repo / CKPT).read_text()


@pytest.mark.parametrize("issue", ["#", "issue 4", "https://github.com/o/r/pull/4", "#-4"])
def test_issue_that_is_no_number_is_refused(
    megatron_repo: Path, run_cli: RunCli, issue: str
) -> None:
    before = snapshot(megatron_repo)
    words = ["recipe", "mark-broken", "gpt_16b_perf", "--issue", issue, "--reason", "x"]
    result = run_cli("--repo", megatron_repo, *words)
    assert result.code == 2 and "expected an issue number" in result.err
    assert snapshot(megatron_repo) == before


def test_recipe_show_without_a_case_lists_the_cases(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "--json", "recipe", "show")
    assert result.code == 0, result.err
    cases = {c["case"]: c for c in json.loads(result.out)["cases"]}
    assert sorted(cases) == [
        "ckpt_converter",
        "gpt_16b_perf",
        "gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_validation",
    ]
    assert cases["ckpt_converter"]["files"] == [CKPT]
    assert cases["ckpt_converter"]["scopes"] == {
        "dev": ["mr-broken", "mr-github-broken"],
        "lts": ["nightly-broken"],
    }
    text = run_cli("--repo", megatron_repo, "recipe", "show")
    assert text.code == 0 and "gpt_16b_perf" in text.out and "lts: nightly-broken" in text.out


def test_help_examples_name_cases_that_exist(megatron_repo: Path, run_cli: RunCli) -> None:
    from uvdock.cli.spec import COMMANDS

    cases = {c["case"] for c in json.loads(run_cli("--repo", megatron_repo, "--json", "recipe", "show").out)["cases"]}  # fmt: skip
    for (group, _), spec in COMMANDS.items():
        if group != "recipe":
            continue
        for example in spec.examples:
            words = shlex.split(example)
            after = words[words.index("recipe") + 2 :]
            if after and not after[0].startswith("-"):
                assert after[0] in cases, example


def test_unknown_command_that_is_a_subcommand(run_cli: RunCli) -> None:
    result = run_cli("bump", "26.07-py3")
    assert result.code == 2
    assert "did you mean `uvdock image bump`?" in result.err


def test_dev_bump_between_lts_and_dev_names_lts_first(megatron_repo: Path, run_cli: RunCli) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", "25.11-py3", "--offline")
    assert result.code == 2
    hint = result.err.split("hint:", 1)[1]
    assert hint.index("--lts") < hint.index("--allow-downgrade")
    assert "uvdock image bump 25.11-py3 --lts" in hint
    assert snapshot(megatron_repo) == before
    older = run_cli("--repo", megatron_repo, "image", "bump", "25.01-py3", "--offline")
    assert older.code == 2 and "--lts" not in older.err  # older than LTS too: a plain downgrade


def test_bump_to_the_current_tag_prints_no_pr_title(megatron_repo: Path, run_cli: RunCli) -> None:
    dockerfile = megatron_repo / "docker/Dockerfile.ci.dev"
    dockerfile.write_text(dockerfile.read_text().replace(":26.06-py3", ":26.05-py3"))
    result = run_cli(
        "--repo", megatron_repo, "image", "bump", "26.06-py3", "--offline", "--pr-body"
    )
    assert result.code == 0, result.err
    assert "already at 26.06-py3" in result.out + result.err
    assert "Update Docker image version" not in result.out
    assert ":26.06-py3" in dockerfile.read_text()


def test_mark_broken_of_a_case_with_only_lts_rows_needs_lts(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    recipe = "tests/test_utils/recipes/h100/lts_only.yaml"
    text = (
        "type: basic\nspec:\n  platforms: [dgx_h100]\nproducts:\n"
        "  - test_case: [only_lts]\n    products:\n"
        "      - environment: [lts]\n        scope: [nightly]\n"
    )
    repo = make_repo({recipe: text})
    words = ["recipe", "mark-broken", "only_lts", "--issue", "3", "--reason", "x"]
    refused = run_cli("--repo", repo, *words)
    assert refused.code == 2 and "re-run with --lts" in refused.err
    assert (repo / recipe).read_text() == text
    opted = run_cli("--repo", repo, *words, "--lts")
    assert opted.code == 0, opted.err
    assert "scope: [nightly-broken]  # was: [nightly]" in (repo / recipe).read_text()
