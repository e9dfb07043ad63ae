"""The pull request of a base-image bump, after Megatron-LM's workflow (docs: bump-base-image):
title, labels, `/ok to test` on forks, golden values refreshed, regressions marked broken. For
LTS the title adds "LTS" (our convention) and `container::lts` runs the LTS CI lane."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from uvdock.image import contents
from uvdock.image.pins import Pin
from uvdock.registry.tags import PREFIX
from uvdock.ui.markdown_text import code_span

FUNCTIONAL_TESTS_LABEL = "Run functional tests"
LTS_LABEL = "container::lts"
RERUN = "/ok to test <commit-sha>"
GOLDEN_VALUES = "--source github --pipeline-id <RUN_ID> --only-failing"
MARK_BROKEN = "uvdock recipe mark-broken CASE --issue N --reason TEXT"


def title(tag: str, lane: str) -> str:
    return f"chore: Update {'LTS ' if lane == 'lts' else ''}Docker image version to {tag}"


def handoff(tag: str, lane: str = "dev") -> dict[str, Any]:
    """The steps after the bump, as data (the JSON `handoff` object)."""
    return {
        "title": title(tag, lane),
        "label": FUNCTIONAL_TESTS_LABEL,
        "rerun": RERUN,
        "golden_values": GOLDEN_VALUES,
        "regressions": MARK_BROKEN,
        **({"lts_label": LTS_LABEL} if lane == "lts" else {}),
    }


def handoff_lines(tag: str, lane: str = "dev") -> list[str]:
    lts = f"  apply the `{LTS_LABEL}` label so that the LTS CI lane runs"
    return [
        "",
        "Next, for the pull request:",
        f"  title: {title(tag, lane)}",
        f"  apply the `{FUNCTIONAL_TESTS_LABEL}` label before the first push",
        *([lts] if lane == "lts" else []),
        f"  from a fork: comment `{RERUN}` for each new commit",
        "  golden-value drift is expected: refresh with the update-golden-values skill:",
        f"    {GOLDEN_VALUES}",
        "  real regressions (hangs, OOM) must not block the bump: file an issue, then",
        f"    {MARK_BROKEN}",
    ]


def _plain(text: str, limit: int = 80) -> str:
    """Registry text safe in one Markdown cell: printable, no pipe, short (bodies have a limit)."""
    shown = "".join(ch if ch.isprintable() else "?" for ch in text)
    shown = shown if len(shown) <= limit else shown[: limit - 1] + "…"
    return shown.replace("|", "\\|")


def _cell(text: str) -> str:
    return code_span(_plain(text)) if text else "-"


def contents_section(report: contents.ImageReport) -> list[str]:
    lines = ["### Image contents", ""]
    new = _cell(report.new_tag)
    if report.skipped:
        lines += [
            f"The image contents were not checked ({report.skipped}): component versions and "
            "manifest digests are not shown.",
            "",
        ]
    else:
        old = _cell(report.old_tag) if report.old_tag else "before"
        components = contents.compare(report.before, report.after)
        called = contents.callouts(components)
        lines += [f"- **{line}**" for line in called] + ([""] if called else [])
        if components:
            lines += [f"| Component | {old} | {new} |", "|---|---|---|"]
        else:
            lines.append("No component versions are stated in either image's environment.")
        for c in components:
            after = f"**{_cell(c.after)}**" if c.changed and c.after else _cell(c.after)
            lines.append(f"| {c.label} | {_cell(c.before)} | {after} |")
        digests: dict[str, list[str]] = {}
        for side, image in enumerate((report.before, report.after)):
            for found in image.platforms if image else ():
                digests.setdefault(found.platform or "?", ["", ""])[side] = found.digest
        if digests:
            lines += ["", f"| Platform | {old} manifest | {new} manifest |", "|---|---|---|"]
        lines += [f"| {_plain(p)} | {_cell(a)} | {_cell(b)} |" for p, (a, b) in digests.items()]
        unread = [f"- {tag}: not in the registry" for tag in report.not_found()]
        problems = [*report.unread, *contents.problems((report.before, report.after))]
        unread += [f"- {_plain(line, limit=400)}" for line in problems]
        lines += ["", "Not read from the registry:", "", *unread] if unread else []
        lines.append("")
    notes = contents.release_notes_url(report.new_tag)
    return [*lines, f"Release notes of {new}: {notes}", ""]


def render(
    lane: str,
    tag: str,
    current: str | None,
    changed: Sequence[Pin],
    report: contents.ImageReport | None = None,
) -> str:
    """Title line, a blank line, then the Markdown body (like a commit message)."""
    other = "dev" if lane == "lts" else "lts"
    before = code_span(f"{PREFIX}{current}") if current else "its previous tag"
    lts = [f"- [ ] The `{LTS_LABEL}` label is applied, so that the LTS CI lane runs"]
    lines = [
        title(tag, lane),
        "",
        f"Moves the **{lane}** CI base image from {before} to `{PREFIX}{tag}`. "
        "GitHub CI and GitLab CI pin it separately; this updates every managed pin of the "
        f"lane in the same pull request. The {other} lane is unchanged.",
        "",
        "### Pins changed",
        "",
        # Path and old tag are read from repository files: code_span keeps them inert.
        *(
            f"- {code_span(pin.location)}{f' ({pin.platform})' if pin.platform else ''}:"
            f" {code_span(pin.tag)} -> {code_span(tag)}"
            for pin in changed
        ),
        "",
        *(contents_section(report) if report is not None else []),
        "### Checklist",
        "",
        f"- [ ] The `{FUNCTIONAL_TESTS_LABEL}` label is applied (before the first push)",
        *(lts if lane == "lts" else []),
        f"- [ ] From a fork: one `{RERUN}` comment for each new commit",
        "- [ ] Golden-value drift refreshed with the update-golden-values skill "
        f"(`{GOLDEN_VALUES}`); its per-metric summary is below",
        "- [ ] Real regressions (hangs, OOM, numerics) have a tracking issue and are marked "
        f"broken, not fixed here: `{MARK_BROKEN}`",
        f"- [ ] `uvdock image check` passes: every {lane} pin agrees, the {other} pins are "
        "unchanged",
        "",
        "### Golden values",
        "",
        "<!-- Paste the update-golden-values skill's per-metric relative-difference summary. -->",
    ]
    return "\n".join(lines) + "\n"
