"""What a failed `uv lock --check` means, from uv's own words: only "needs to be updated"
is a stale lock; a Python or an index out of reach is the environment (exit 3); anything
else is uv failing (exit 1)."""

from __future__ import annotations

import re
from enum import Enum
from typing import NamedTuple

# uv 0.13.9's words (crates/uv/src/commands/project/lock.rs); older uv had no backticks.
_STALE = re.compile(r"The lockfile at `?[^`\s]*uv\.lock`? needs to be updated")
_ENVIRONMENT = re.compile(
    r"No interpreter found for Python|No download found for request|"
    r"Failed to download|Could not resolve host|dns error|failed to lookup address|"
    r"Connection refused|Connection reset|timed out|Network is unreachable|"
    r"Failed to fetch|error sending request|tcp connect error|"
    r"is not installed and (?:the )?offline|network access is disabled|offline mode",
    re.I,
)


class Verdict(Enum):
    CURRENT = "current"
    STALE = "stale"
    ENVIRONMENT = "environment"
    FAILED = "failed"


class LockCheck(NamedTuple):
    verdict: Verdict
    cause: str  # uv's line that decided it ("" when current or undecided)


def classify(returncode: int, output: str) -> LockCheck:
    if returncode == 0:
        return LockCheck(Verdict.CURRENT, "")
    for pattern, verdict in ((_STALE, Verdict.STALE), (_ENVIRONMENT, Verdict.ENVIRONMENT)):
        if found := next((line for line in output.splitlines() if pattern.search(line)), None):
            return LockCheck(verdict, found.strip())
    return LockCheck(Verdict.FAILED, "")


def last_lines(output: str, count: int = 12) -> str:
    return "\n".join([line for line in output.splitlines() if line.strip()][-count:])
