"""`uvdock image check --format github|gitlab`: drift as CI annotations on the diff."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import RunCli, commit_all

from uvdock.image import ci_report
from uvdock.image.pins import Finding

BUILD = ".gitlab/stages/01.build.yml"
GITHUB_GOLDEN = """\
::error file=.gitlab/stages/01.build.yml,line=70,title=dev base image drift::dev pin is \
26.02-py3, expected 26.06-py3 (from docker/.ngc_version.dev)
::error file=docker/Dockerfile.ci.dev,line=4,title=dev base image drift::dev pin is 25.11-py3, \
expected 26.06-py3 (from docker/.ngc_version.dev)
::error file=.gitlab/stages/01.build.yml,line=60,title=lts base image drift::lts pin is \
25.06-py3, expected 25.09-py3 (from docker/.ngc_version.lts)
"""
GITLAB_GOLDEN = [
    {
        "description": "dev pin is 26.02-py3, expected 26.06-py3 (from docker/.ngc_version.dev)",
        "check_name": "uvdock/image-check/drift",
        "severity": "major",
        "location": {"path": BUILD, "lines": {"begin": 70}},
    },
    {
        "description": "dev pin is 25.11-py3, expected 26.06-py3 (from docker/.ngc_version.dev)",
        "check_name": "uvdock/image-check/drift",
        "severity": "major",
        "location": {"path": "docker/Dockerfile.ci.dev", "lines": {"begin": 4}},
    },
    {
        "description": "lts pin is 25.06-py3, expected 25.09-py3 (from docker/.ngc_version.lts)",
        "check_name": "uvdock/image-check/drift",
        "severity": "major",
        "location": {"path": BUILD, "lines": {"begin": 60}},
    },
]
SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def _replace_on_line(path: Path, line: int, old: str, new: str) -> None:
    lines = path.read_text().split("\n")
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new)
    path.write_text("\n".join(lines))


@pytest.fixture
def drifted(megatron_repo: Path) -> Path:
    """The real Megatron-LM files with two dev pins and one LTS row off their pin files."""
    _replace_on_line(megatron_repo / "docker/Dockerfile.ci.dev", 4, "26.06-py3", "25.11-py3")
    _replace_on_line(megatron_repo / BUILD, 70, "26.06-py3", "26.02-py3")
    _replace_on_line(megatron_repo / BUILD, 60, "25.09-py3", "25.06-py3")
    commit_all(megatron_repo, "drift")
    return megatron_repo


def check_code_quality_schema(report: Any) -> None:
    """GitLab's code-quality report: the fields GitLab requires, with their types."""
    assert isinstance(report, list)
    for issue in report:
        assert isinstance(issue["description"], str) and issue["description"]
        assert isinstance(issue["check_name"], str) and issue["check_name"]
        assert re.fullmatch(r"[0-9a-f]{64}", issue["fingerprint"])
        assert issue["severity"] in SEVERITIES
        assert isinstance(issue["location"]["path"], str)
        assert not issue["location"]["path"].startswith("/")  # relative to the repository
        begin = issue["location"]["lines"]["begin"]
        assert isinstance(begin, int) and begin >= 1
    fingerprints = [issue["fingerprint"] for issue in report]
    assert len(set(fingerprints)) == len(fingerprints)


def test_github_annotations_on_a_drifted_megatron(drifted: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", drifted, "image", "check", "--format", "github")
    assert result.code == 1  # unchanged: findings fail the check
    assert result.out == GITHUB_GOLDEN
    assert "3 base-image pin findings" in result.err  # the summary stays in the log


def test_gitlab_report_on_a_drifted_megatron(drifted: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", drifted, "image", "check", "--format", "gitlab")
    assert result.code == 1
    report = json.loads(result.out)
    check_code_quality_schema(report)
    assert [{k: v for k, v in i.items() if k != "fingerprint"} for i in report] == GITLAB_GOLDEN


def test_gitlab_fingerprints_are_stable_when_lines_move(drifted: Path, run_cli: RunCli) -> None:
    before = json.loads(run_cli("--repo", drifted, "image", "check", "--format", "gitlab").out)
    build = drifted / BUILD
    build.write_text("# a comment on top moves every row down\n" + build.read_text())
    after = json.loads(run_cli("--repo", drifted, "image", "check", "--format", "gitlab").out)
    assert [i["fingerprint"] for i in after] == [i["fingerprint"] for i in before]
    assert after[0]["location"]["lines"]["begin"] == 71


@pytest.mark.parametrize(("fmt", "out"), [("github", ""), ("gitlab", "[]\n")])
def test_no_findings(megatron_repo: Path, run_cli: RunCli, fmt: str, out: str) -> None:
    result = run_cli("--repo", megatron_repo, "image", "check", "--format", fmt)
    assert (result.code, result.out) == (0, out)


def test_json_wins_over_format(drifted: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", drifted, "--json", "image", "check", "--format", "github")
    assert result.code == 1
    assert json.loads(result.out)["ok"] is False


def test_github_escapes_data_and_properties() -> None:
    finding = Finding(
        "malformed", "dev", "ci/a,b:c.yml", 3, "100% wrong: `x`\r\nsee line 2", tag="x"
    )
    assert ci_report.github_annotation(finding) == (
        "::error file=ci/a%2Cb%3Ac.yml,line=3,title=dev base image malformed"
        "::100%25 wrong: `x`%0D%0Asee line 2"
    )


def test_github_annotation_without_a_line() -> None:
    finding = Finding("pin-file-missing", "lts", "docker/.ngc_version.lts", None, "missing")
    assert ci_report.github_annotation(finding) == (
        "::error file=docker/.ngc_version.lts,title=lts base image pin-file-missing::missing"
    )


def test_identical_findings_get_distinct_fingerprints() -> None:
    twin = Finding("drift", "dev", "a.yml", 1, "dev pin is X", tag="X", expected="Y")
    report = ci_report.gitlab_issues([twin, twin._replace(line=9)])
    check_code_quality_schema(report)
