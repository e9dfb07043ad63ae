"""`uvdock image bump --pr-body`: the pull request's title and body, for the dev and LTS lanes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RunCli
from samples import gfm
from samples.pins import snapshot

DEV_BODY = """\
chore: Update Docker image version to 26.09-py3

Moves the **dev** CI base image from `nvcr.io/nvidia/pytorch:26.06-py3` to \
`nvcr.io/nvidia/pytorch:26.09-py3`. GitHub CI and GitLab CI pin it separately; this updates \
every managed pin of the lane in the same pull request. The lts lane is unchanged.

### Pins changed

- `.gitlab/stages/01.build.yml:65` (amd64): `26.06-py3` -> `26.09-py3`
- `.gitlab/stages/01.build.yml:70` (arm64): `26.06-py3` -> `26.09-py3`
- `docker/.ngc_version.dev:1`: `26.06-py3` -> `26.09-py3`
- `docker/Dockerfile.ci.dev:4`: `26.06-py3` -> `26.09-py3`

### Image contents

The image contents were not checked (offline: offline = true in the configuration or \
UVDOCK_OFFLINE): component versions and manifest digests are not shown.

Release notes of `26.09-py3`: \
https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-26-09.html

### Checklist

- [ ] The `Run functional tests` label is applied (before the first push)
- [ ] From a fork: one `/ok to test <commit-sha>` comment for each new commit
- [ ] Golden-value drift refreshed with the update-golden-values skill \
(`--source github --pipeline-id <RUN_ID> --only-failing`); its per-metric summary is below
- [ ] Real regressions (hangs, OOM, numerics) have a tracking issue and are marked broken, \
not fixed here: `uvdock recipe mark-broken CASE --issue N --reason TEXT`
- [ ] `uvdock image check` passes: every dev pin agrees, the lts pins are unchanged

### Golden values

<!-- Paste the update-golden-values skill's per-metric relative-difference summary. -->
"""

LTS_BODY = """\
chore: Update LTS Docker image version to 26.03-py3

Moves the **lts** CI base image from `nvcr.io/nvidia/pytorch:25.09-py3` to \
`nvcr.io/nvidia/pytorch:26.03-py3`. GitHub CI and GitLab CI pin it separately; this updates \
every managed pin of the lane in the same pull request. The dev lane is unchanged.

### Pins changed

- `.gitlab/stages/01.build.yml:56` (amd64): `25.09-py3` -> `26.03-py3`
- `.gitlab/stages/01.build.yml:60` (arm64): `25.09-py3` -> `26.03-py3`
- `docker/.ngc_version.lts:1`: `25.09-py3` -> `26.03-py3`

### Image contents

The image contents were not checked (offline: offline = true in the configuration or \
UVDOCK_OFFLINE): component versions and manifest digests are not shown.

Release notes of `26.03-py3`: \
https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-26-03.html

### Checklist

- [ ] The `Run functional tests` label is applied (before the first push)
- [ ] The `container::lts` label is applied, so that the LTS CI lane runs
- [ ] From a fork: one `/ok to test <commit-sha>` comment for each new commit
- [ ] Golden-value drift refreshed with the update-golden-values skill \
(`--source github --pipeline-id <RUN_ID> --only-failing`); its per-metric summary is below
- [ ] Real regressions (hangs, OOM, numerics) have a tracking issue and are marked broken, \
not fixed here: `uvdock recipe mark-broken CASE --issue N --reason TEXT`
- [ ] `uvdock image check` passes: every lts pin agrees, the dev pins are unchanged

### Golden values

<!-- Paste the update-golden-values skill's per-metric relative-difference summary. -->
"""


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")


@pytest.mark.parametrize(
    ("words", "body"), [(["26.09-py3"], DEV_BODY), (["--lts", "26.03-py3"], LTS_BODY)]
)
def test_dry_run_prints_the_body_and_writes_nothing(
    megatron_repo: Path, run_cli: RunCli, words: list[str], body: str
) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "--dry-run", "image", "bump", *words, "--pr-body")
    assert result.code == 0, result.err
    assert result.out == body  # stdout holds only the body: `> body.md` or `gh --body-file -`
    assert "+++ b/" in result.err and "nothing written" in result.err
    assert snapshot(megatron_repo) == before


@pytest.mark.parametrize(
    ("words", "body"), [(["26.09-py3"], DEV_BODY), (["--lts", "26.03-py3"], LTS_BODY)]
)
def test_the_bump_is_written_then_the_body_printed(
    megatron_repo: Path, run_cli: RunCli, words: list[str], body: str
) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", *words, "--pr-body")
    assert result.code == 0, result.err
    assert result.out == body
    assert snapshot(megatron_repo) != before
    assert run_cli("--repo", megatron_repo, "image", "check").code == 0


@pytest.mark.parametrize("body", [DEV_BODY, LTS_BODY])
def test_github_shows_the_checklist_as_task_items(body: str) -> None:
    items = gfm.task_items(body)
    assert len(items) == body.count("\n- [ ] ")
    assert any("`Run functional tests`" in item for item in items)
    assert any("/ok to test <commit-sha>" in item for item in items)
    assert ("`container::lts`" in " ".join(items)) == (body is LTS_BODY)


def test_json_carries_the_body(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli(
        "--repo", megatron_repo, "--json", "--dry-run", "image", "bump", "26.09-py3", "--pr-body"
    )
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["pr_body"] == DEV_BODY
    assert payload["handoff"]["title"] == "chore: Update Docker image version to 26.09-py3"


def test_lts_hand_off_names_the_lts_label(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "--dry-run", "image", "bump", "--lts", "26.03-py3")
    assert "title: chore: Update LTS Docker image version to 26.03-py3" in result.out
    assert "apply the `container::lts` label" in result.out
