"""GitHub-flavoured Markdown as GitHub reads it: tables and task-list items, through
markdown-it-py (CommonMark + the GFM table rule; it comes with rich)."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

_PARSER = MarkdownIt("commonmark").enable("table")


def tokens(text: str) -> list[Token]:
    return _PARSER.parse(text)


def table_rows(text: str) -> list[list[str]]:
    """Every rendered table row (header included) as its cells' text."""
    rows: list[list[str]] = []
    for token in tokens(text):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows and token.level >= 4:
            rows[-1].append(token.content)
    return rows


def task_items(text: str) -> list[str]:
    """The text of each list item GitHub shows as a checkbox (`- [ ] ...`)."""
    items: list[str] = []
    in_item = False
    for token in tokens(text):
        if token.type == "list_item_open":
            in_item = True
        elif token.type == "inline" and in_item:
            if token.content.startswith("[ ] "):
                items.append(token.content[4:])
            in_item = False
    return items
