"""`image check` findings in the formats CI systems put on a diff: GitHub workflow commands
(escaped as actions/toolkit does) and a GitLab code-quality report. Imported only when one is
asked for: plain `image check` is on a start-up budget."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from uvdock.image.pins import Finding

CHECK_PREFIX = "uvdock/image-check"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(finding: Finding) -> str:
    line = f",line={finding.line}" if finding.line is not None else ""
    title = escape_property(f"{finding.lane} base image {finding.kind}")
    where = f"file={escape_property(finding.path)}{line},title={title}"
    return f"::error {where}::{escape_data(finding.message)}"


def gitlab_issues(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    seen: dict[tuple[object, ...], int] = {}
    issues: list[dict[str, Any]] = []
    for finding in findings:
        # Not the line: an issue that only moves stays the same issue between base and head.
        # The occurrence keeps two identical findings in one file apart (GitLab merges equal ones).
        key = (finding.kind, finding.lane, finding.path, finding.tag, finding.expected)
        seen[key] = seen.get(key, 0) + 1
        fingerprint = hashlib.sha256(json.dumps([*key, seen[key]]).encode()).hexdigest()
        issues.append(
            {
                "description": finding.message,
                "check_name": f"{CHECK_PREFIX}/{finding.kind}",
                "fingerprint": fingerprint,
                "severity": "major",
                "location": {"path": finding.path, "lines": {"begin": finding.line or 1}},
            }
        )
    return issues


def render(fmt: str, findings: Sequence[Finding]) -> str:
    """`fmt` is "github" or "gitlab"; the text ends with a newline unless it is empty."""
    if fmt == "github":
        return "".join(github_annotation(finding) + "\n" for finding in findings)
    return json.dumps(gitlab_issues(findings), indent=2) + "\n"
