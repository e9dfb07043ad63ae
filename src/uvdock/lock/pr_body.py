"""The pull request of a uv.lock bump (`lock --upgrade --pr-body`): title, label, table, checklist.

It carries the lock diff a reviewer needs (every package that moved, by kind), with the
packages the base image provides (`protected-packages`) marked: their lock entries move, the
image's copies do not. The title is `lock-bump-title` with `{branch}` and `{date}`. Pure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection

from uvdock.errors import InputRefused
from uvdock.lock import markdown
from uvdock.lock.lockfile import LockDiff
from uvdock.lock.markdown import Described, moved, newest
from uvdock.project.names import normalize_name
from uvdock.ui.markdown_text import code_span

DEFAULT_TITLE = "chore: Bump `uv.lock` ({branch}) ({date})"
FUNCTIONAL_TESTS_LABEL = "Run functional tests"
RERUN = "/ok to test <commit-sha>"
PLACEHOLDERS = ("branch", "date")
_FIELD = re.compile(r"\{([^{}]*)\}")


def title(template: str, branch: str, date: str) -> str:
    """The template with {branch} and {date} filled in; any other {field} is refused."""
    unknown = [f for f in _FIELD.findall(template) if f not in PLACEHOLDERS]
    if unknown or not template.strip():
        raise InputRefused(
            f"config `lock-bump-title`: unknown placeholder {{{unknown[0]}}}"
            if unknown
            else "config `lock-bump-title` is empty",
            hint="placeholders: {branch} and {date}; default: " + DEFAULT_TITLE,
        )
    filled = template.replace("{branch}", branch).replace("{date}", date)
    # One printable line, whatever a repository's configuration held: it becomes a PR title.
    printable = "".join(ch if ch.isprintable() or ch.isspace() else "?" for ch in filled)
    return " ".join(printable.split())


def kinds(diff: LockDiff) -> dict[str, int]:
    """How many packages moved by each kind, in the order a reviewer reads them."""
    counts: Counter[str] = Counter()
    for c in diff.changed:
        # A downgrade is counted once, as what needs a look, not as a release kind.
        if (change := moved(c.before, c.after)).downgrade:
            counts["downgrade"] += 1
            continue
        git_move = change.kind == "source" and Described.parse(newest(c.after)).source
        kind = "git revision" if git_move and "git " in git_move else change.kind
        counts[kind if kind in ("major", "minor", "patch", "git revision") else "other"] += 1
    counts["added"], counts["removed"] = len(diff.added), len(diff.removed)
    order = ("major", "minor", "patch", "git revision", "other", "added", "removed", "downgrade")
    return {kind: counts[kind] for kind in order if counts[kind]}


def summary(diff: LockDiff) -> str:
    plural = ("git revision", "downgrade")
    parts = [f"{n} {kind}" + "s" * (kind in plural and n > 1) for kind, n in kinds(diff).items()]
    return ", ".join(parts) or "no package changes"


def render(
    diff: LockDiff, *, title_text: str, branch: str, upgrade: str, protected: Collection[str] = ()
) -> str:
    """Title line, a blank line, then the Markdown body (like a commit message)."""
    table = markdown.render(diff, title="uv.lock", protected=protected)
    text = (
        f"{title_text}\n\nRelocks `uv.lock` of {code_span(branch)} with {code_span(upgrade)} in "
        "the CI container (the image's uv, so the lock format does not churn): "
        f"{summary(diff)}.\n\nLabel: `{FUNCTIONAL_TESTS_LABEL}`\n\n### Lock changes\n\n{table}\n"
    )
    marked = {normalize_name(name) for name in protected}
    names = [c.name for c in diff.changed] + [a.name for a in (*diff.added, *diff.removed)]
    if shown := ", ".join(code_span(n) for n in sorted(names) if normalize_name(n) in marked):
        text += (
            f"Marked{markdown.PROTECTED_MARK}: the base image provides {shown} "
            "(`protected-packages`). Their lock entries move; the image's copies do not, "
            "`uvdock sync` never reinstalls them.\n\n"
        )
    text += (
        "### Checklist\n\n"
        "- [ ] Verify the presubmit CI; merge only when it completed successfully\n"
        f"- [ ] The `{FUNCTIONAL_TESTS_LABEL}` label is applied (before the first push)\n"
        f"- [ ] From a fork: one `{RERUN}` comment for each new commit\n"
    )
    if "downgrade" in kinds(diff):
        text += "- [ ] The downgrades flagged above are intended\n"
    return text
