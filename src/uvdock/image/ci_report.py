"""`image check` findings as GitHub workflow commands or a GitLab code-quality report.
Imported only when one is asked for: plain `image check` is on a start-up budget."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from uvdock.image.pins import Finding


def _escaped(text: str, *, in_property: bool = True) -> str:
    """As actions/toolkit escapes: data `%`, CR and LF; a property's value also `:` and `,`."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if in_property else text


def github_annotation(finding: Finding) -> str:
    line = f",line={finding.line}" if finding.line is not None else ""
    title = _escaped(f"{finding.lane} base image {finding.kind}")
    where = f"file={_escaped(finding.path)}{line},title={title}"
    return f"::error {where}::{_escaped(finding.message, in_property=False)}"


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
                "check_name": f"uvdock/image-check/{finding.kind}",
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
