"""Put back the comment and blank lines a side wrote above what it added.

The structured merge rebuilds ours' document with tomlkit; an entry, key or table that
theirs added arrives without the comment lines theirs wrote above it (tomlkit files those
under whatever precedes them). Used only when git's own bytes could not be kept
(textual_merge): each block of lines theirs inserted is split into its leading comment and
blank lines and the first line of content; when that content line appears exactly once in
the merged text without those lines above it, they are inserted there. The result must
mean the same as before (tomllib), or the merged text is returned unchanged.
"""

from __future__ import annotations

import tomllib

from uvdock.merge.textual import line_changes


def _is_comment_or_blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _added_blocks(base: list[str], side: list[str]) -> list[list[str]]:
    """The runs of lines `side` inserted or wrote in place of base lines."""
    return [lines for _, _, lines in line_changes(base, side)]


def _comment_heads(block: list[str]) -> list[tuple[list[str], str]]:
    """(comment and blank lines, the content line they sit on) inside one added block."""
    heads = []
    pending: list[str] = []
    for line in block:
        if _is_comment_or_blank(line):
            pending.append(line)
            continue
        if pending:
            heads.append((pending, line))
        pending = []
    return heads


def carry_comments(merged: str, base: str, theirs: str) -> str:
    """`merged` with theirs' comment lines back above the lines theirs added."""
    lines = merged.splitlines(keepends=True)
    base_lines, their_lines = base.splitlines(keepends=True), theirs.splitlines(keepends=True)
    changed = False
    for block in _added_blocks(base_lines, their_lines):
        for comments, content in _comment_heads(block):
            if lines.count(content) != 1 or any(c.strip() and c in lines for c in comments):
                continue  # not one place to put them, or they are in the text already
            at = lines.index(content)
            if lines[max(0, at - len(comments)) : at] == comments:
                continue
            lines[at:at] = comments
            changed = True
    if not changed:
        return merged
    text = "".join(lines)
    try:
        same = tomllib.loads(text) == tomllib.loads(merged)
    except ValueError:
        return merged
    return text if same else merged
