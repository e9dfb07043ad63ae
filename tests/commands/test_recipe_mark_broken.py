"""`uvdock recipe mark-broken`: dry run, apply, refusals, JSON, the shared recipes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from conftest import RunCli, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from samples.recipes import MODEL, OTHER, RECIPES, crlf, runs, unbroken

MODEL_PATH = f"{RECIPES}/a/model.yaml"
OTHER_PATH = f"{RECIPES}/b/other.yaml"


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({MODEL_PATH: crlf(MODEL), OTHER_PATH: OTHER})


@pytest.fixture
def model_repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({MODEL_PATH: MODEL})


def _bytes(repo: Path) -> tuple[bytes, bytes]:
    return (repo / MODEL_PATH).read_bytes(), (repo / OTHER_PATH).read_bytes()


def test_dry_run_shows_the_diff_and_writes_nothing(repo: Path, run_cli: RunCli) -> None:
    before = _bytes(repo)
    result = run_cli(
        "--repo",
        repo,
        "--dry-run",
        "recipe",
        "mark-broken",
        "alpha",
        "--issue",
        "5",
        "--reason",
        "hangs",
    )
    assert result.code == 0, result.err
    assert _bytes(repo) == before
    assert f"+++ b/{MODEL_PATH}" in result.out and f"+++ b/{OTHER_PATH}" in result.out
    assert "+        # Broken: hangs - see issue #5.\r\n" in result.out  # CRLF kept: it applies
    assert "+        scope: [mr-broken, mr-github-broken]  # was: [mr, mr-github]\r\n" in result.out
    assert "would change 2 file(s)" in result.out


def test_apply_marks_every_file_and_keeps_crlf(repo: Path, run_cli: RunCli) -> None:
    result = run_cli(
        "--repo",
        repo,
        "recipe",
        "mark-broken",
        "alpha",
        "--issue",
        "5",
        "--reason",
        "hangs",
        "--lts",
    )
    assert result.code == 0, result.err
    model, other = _bytes(repo)
    assert b"\n" not in model.replace(b"\r\n", b"")
    assert b"        scope: [nightly-broken]  # was: [nightly]\r\n" in model
    assert other.endswith(
        b"    scope: [mr-slim-broken]  # was: [mr-slim]\n- test_case: [zeta]\n"
        + OTHER.split("- test_case: [zeta]\n")[1].encode()
    )
    assert unbroken(runs(model.decode())) == unbroken(runs(MODEL))
    assert git(repo, "status", "--porcelain").split() == ["M", MODEL_PATH, "M", OTHER_PATH]


def test_platform_split_in_one_file_only(repo: Path, run_cli: RunCli) -> None:
    result = run_cli(
        "--repo", repo, "--json", "recipe", "mark-broken", "alpha",
        "--issue", "5", "--reason", "nccl timeout",
        "--platform", "dgx_h100", "--environment", "dev",
    )  # fmt: skip
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["files"] == [MODEL_PATH, OTHER_PATH]
    assert [c["what"] for c in payload["changes"]] == [
        "split platforms [dgx_a100, dgx_h100]: [dgx_h100] apart",
        "scope [mr, mr-github] -> [mr-broken, mr-github-broken]",
        "split platforms [dgx_a100, dgx_h100]: [dgx_h100] apart",
        "scope [mr-slim] -> [mr-slim-broken]",
    ]
    model, other = (b.decode() for b in _bytes(repo))
    broken = {i for i in runs(model) | runs(other) if i[4] and i[0] == "alpha"}
    assert {(i[1], i[2]) for i in broken} == {("dev", "dgx_h100")}
    yaml.safe_load(model)


def test_already_broken_exits_0_unchanged(megatron_repo: Path, run_cli: RunCli) -> None:
    path = megatron_repo / RECIPES / "h100/ckpt_converter.yaml"
    before = path.read_bytes()
    result = run_cli(
        "--repo",
        megatron_repo,
        "recipe",
        "mark-broken",
        "ckpt_converter",
        "--issue",
        "3",
        "--reason",
        "x",
    )
    assert result.code == 0, result.err
    assert "already broken" in result.out
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reason", "x"], "--issue"),
        (["--issue", "5"], "--reason"),
        (["--issue", "five", "--reason", "x"], "expected an issue number"),
        (["--issue", "0", "--reason", "x"], "positive"),
        (["--issue", "5", "--reason", "two\nlines"], "one line"),
        (
            ["--issue", "5", "--reason", "x", "--platform", "dgx_gb200"],
            "no row for platform dgx_gb200",
        ),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(
    repo: Path, run_cli: RunCli, args: list[str], message: str
) -> None:
    before = _bytes(repo)
    result = run_cli("--repo", repo, "recipe", "mark-broken", "alpha", *args)
    assert result.code == 2
    assert message in result.err
    assert "Traceback" not in result.err
    assert _bytes(repo) == before


def test_unknown_case_exits_2(repo: Path, run_cli: RunCli) -> None:
    result = run_cli(
        "--repo", repo, "recipe", "mark-broken", "zetta", "--issue", "1", "--reason", "x"
    )
    assert result.code == 2
    assert "closest: zeta" in result.err


def test_shared_recipe_exact_bytes(megatron_repo: Path, run_cli: RunCli) -> None:
    path = megatron_repo / RECIPES / "gb200/gpt-perf.yaml"
    before = path.read_text()
    result = run_cli(
        "--repo", megatron_repo, "recipe", "mark-broken", "gpt_16b_perf",
        "--issue", "4611", "--reason", "hangs on repeat iter 3, exceeds 1h job limit",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert path.read_text() == before.replace(
        "        scope: [mr]\n",
        "        # Broken: hangs on repeat iter 3, exceeds 1h job limit - see issue #4611.\n"
        "        scope: [mr-broken]  # was: [mr]\n",
    )


CONTROLS = [chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]] + ["\u2028", "\u2029", "\ufeff"]


@pytest.mark.parametrize("control", CONTROLS, ids=[f"U+{ord(c):04X}" for c in CONTROLS])
def test_reasons_with_control_characters_are_refused(
    make_repo: Callable[..., Path], run_cli: RunCli, control: str
) -> None:
    repo = make_repo({MODEL_PATH: MODEL})
    before = (repo / MODEL_PATH).read_bytes()
    reason = f"hangs{control}after 10 steps"
    result = run_cli(
        "--repo", repo, "recipe", "mark-broken", "alpha", "--issue", "5", "--reason", reason
    )
    assert result.code == 2
    assert f"U+{ord(control):04X}" in result.err
    assert (repo / MODEL_PATH).read_bytes() == before


# Any encodable text (controls included): each reason is either refused or written as YAML
# that PyYAML reads back.
_REASONS = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=30)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(reason=_REASONS)
def test_every_accepted_reason_keeps_valid_yaml_and_unmarks(
    model_repo: Path, run_cli: RunCli, reason: str
) -> None:
    # One repository for every example, its file put back to the committed bytes first (so a
    # failing example cannot spoil the shrinking); a `git init` per example was most of the time.
    repo = model_repo
    (repo / MODEL_PATH).write_bytes(MODEL.encode())
    before = (repo / MODEL_PATH).read_bytes()
    result = run_cli(
        "--repo", repo, "recipe", "mark-broken", "alpha", "--issue", "5", "--reason", reason
    )
    after = (repo / MODEL_PATH).read_bytes()
    if result.code != 0:
        assert result.code == 2, result.err
        assert after == before
        return
    marked = yaml.safe_load(after.decode())
    assert runs(after.decode()) != runs(MODEL)
    assert marked["products"][0]["test_case"] == ["alpha"]
    assert run_cli("--repo", repo, "recipe", "unmark", "alpha").code == 0
    assert (repo / MODEL_PATH).read_bytes() == before


def test_scope_option_on_the_real_recipes(megatron_repo: Path, run_cli: RunCli) -> None:
    case = "ckpt_converter"  # hand-marked in the real repository: dev [mr-broken, mr-github-broken]
    assert run_cli("--repo", megatron_repo, "recipe", "unmark", case, "--lts").code == 0
    git(megatron_repo, "commit", "-qam", "unmarked")
    args = ("recipe", "mark-broken", case, "--issue", "3", "--reason", "gh", "--scope", "mr-github")
    dry = run_cli("--repo", megatron_repo, "--dry-run", *args)
    assert dry.code == 0, dry.err
    patch = dry.out[: dry.out.index("\ntests/test_utils") + 1]
    applied = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=megatron_repo, input=patch, text=True, check=False
    )
    assert applied.returncode == 0
    assert run_cli("--repo", megatron_repo, *args).code == 0
    shown = json.loads(run_cli("--repo", megatron_repo, "--json", "recipe", "show", case).out)
    assert [(r["scope"], r["issue"]) for r in shown["runs"]] == [
        (["mr", "mr-github-broken"], 3),
        (["nightly"], None),
    ]
    assert git(megatron_repo, "diff").count("\n+ ") == 2
