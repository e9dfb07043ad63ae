"""`ARG NAME=default` in a Dockerfile, read as Docker reads it, with the exact span of each default.

Docker's rules that matter for an exact edit: instruction keywords are case-insensitive (`arg`
is ARG) but variable names are case-sensitive (`from_image_name` is another variable); one
ARG may declare several variables (`ARG A=1 B=2`); an instruction continues on the next line
when a line ends with the escape character (`\\`, or the one a `# escape=` parser directive
names), with blanks allowed after it, and comment or blank lines inside a continued
instruction are dropped; heredoc bodies (`RUN <<EOF ... EOF`) are no instructions. The
instruction is tokenised on its logical text (continuations joined), each character keeping its
offset in the file, so a default that is split across lines, or written with escapes or
partial quotes, is reported as a problem instead of being edited wrongly.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from uvdock.files.textlines import Line, split_lines

_DIRECTIVE = re.compile(r"#[ \t]*(?P<key>[A-Za-z]+)[ \t]*=[ \t]*(?P<value>\S*)[ \t]*")
_HEREDOC = re.compile(r"<<(?P<dash>-?)(?P<quote>[\"']?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?P=quote)")
_HEREDOC_INSTRUCTIONS = ("RUN", "COPY", "ADD")


class ArgDefault(NamedTuple):
    value: str  # as Docker reads it (quotes removed)
    start: int  # span of the value in the file's text (inside quotes, if any)
    end: int
    line: int  # 1-based line of the value


class ArgProblem(NamedTuple):
    line: int  # 1-based
    message: str


def _escape_char(lines: list[Line]) -> str:
    """`\\` unless a parser directive at the very top says `# escape=``."""
    for line in lines:
        match = _DIRECTIVE.fullmatch(line.content)
        if match is None:
            break
        if match["key"].lower() == "escape" and match["value"] in ("\\", "`"):
            return match["value"]
    return "\\"


def _continues(content: str, escape: str) -> int | None:
    """Where the continuation escape of this line starts, or None when the line ends here."""
    stripped = content.rstrip(" \t")
    return len(stripped) - 1 if stripped.endswith(escape) else None


def _instructions(text: str, escape: str) -> list[tuple[str, list[int], bool]]:
    """Each ARG instruction's logical text, per character its offset in `text`, and whether it
    comes before the first FROM (a global ARG: the ones FROM lines expand)."""
    lines = split_lines(text)
    found: list[tuple[str, list[int], bool]] = []
    seen_from = False
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.content.lstrip(" \t")
        index += 1
        if not stripped or stripped.startswith("#"):
            continue
        parts = [line]
        cut = _continues(line.content, escape)
        while cut is not None and index < len(lines):
            following = lines[index]
            index += 1
            inner = following.content.lstrip(" \t")
            if inner and not inner.startswith("#"):
                parts.append(following)
                cut = _continues(following.content, escape)
        keyword = stripped.split(None, 1)[0].upper()
        if keyword == "ARG":
            found.append((*_logical(parts, escape), not seen_from))
        elif keyword == "FROM":
            seen_from = True
        elif keyword in _HEREDOC_INSTRUCTIONS:
            index = _skip_heredocs(_logical(parts, escape)[0], lines, index)
    return found


def _logical(parts: list[Line], escape: str) -> tuple[str, list[int]]:
    """The instruction's physical lines joined as Docker joins them, with each char's offset."""
    chars: list[str] = []
    offsets: list[int] = []
    for part in parts:
        cut = _continues(part.content, escape)
        body = part.content if cut is None else part.content[:cut]
        chars.extend(body)
        offsets.extend(range(part.offset, part.offset + len(body)))
    return "".join(chars), offsets


def _skip_heredocs(logical: str, lines: list[Line], index: int) -> int:
    """The index after the heredoc bodies this instruction opens (none: `index` itself)."""
    for match in _HEREDOC.finditer(logical):
        while index < len(lines):
            content = lines[index].content
            index += 1
            if (content.lstrip("\t") if match["dash"] else content) == match["word"]:
                break
    return index


def _words(logical: str, escape: str) -> list[tuple[int, int, bool]]:
    """(start, end, plain) of each blank-separated word; `plain` when it has no escape."""
    words: list[tuple[int, int, bool]] = []
    position = 0
    size = len(logical)
    while position < size:
        if logical[position] in " \t":
            position += 1
            continue
        start, plain, quote = position, True, ""
        while position < size and (quote or logical[position] not in " \t"):
            char = logical[position]
            if char == escape and quote != "'":
                plain = False
                position += 2
                continue
            if quote and char == quote:
                quote = ""
            elif not quote and char in "\"'":
                quote = char
            position += 1
        words.append((start, min(position, size), plain and not quote))
    return words


def _value_span(raw: str) -> tuple[int, int] | None:
    """The value inside a word's `=...` part: bare, or wholly "double" or 'single' quoted."""
    if not raw:
        return None
    if raw[0] in "\"'":
        inner = raw[1:-1]
        if len(raw) >= 2 and raw[-1] == raw[0] and "'" not in inner and '"' not in inner:
            return 1, len(raw) - 1
        return None
    return (0, len(raw)) if "'" not in raw and '"' not in raw else None


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _emptied(name: str, line: int, default_line: int) -> ArgProblem:
    """Docker reads the last global declaration: an empty one leaves FROM with no image."""
    return ArgProblem(
        line,
        f"`ARG {name}=` replaces the default of line {default_line} with an empty value"
        " (Docker reads the last one), so FROM gets no image: remove one of the two",
    )


def arg_defaults(text: str, name: str) -> tuple[list[ArgDefault], list[ArgProblem]]:
    """Every default of ARG `name` (case-sensitive), and the ones uvdock cannot edit exactly."""
    escape = _escape_char(split_lines(text))
    defaults: list[ArgDefault] = []
    problems: list[ArgProblem] = []
    global_default: ArgDefault | None = None
    emptied: ArgProblem | None = None
    for logical, offsets, is_global in _instructions(text, escape):
        head = logical.lstrip(" \t")
        keyword = head.split(None, 1)[0]
        skip = len(logical) - len(head) + len(keyword)
        for start, end, plain in _words(logical[skip:], escape):
            word = logical[skip + start : skip + end]
            key, equals, raw = word.partition("=")
            if key != name or not equals:
                continue  # another variable, or a declaration without a default
            first = offsets[skip + start]
            span = _value_span(raw) if plain else None
            if raw in ("", '""', "''"):  # an empty default is no pin, but replaces an earlier one
                if is_global and global_default is not None:
                    emptied = _emptied(name, _line_at(text, first), global_default.line)
                continue
            value_start = skip + start + len(key) + 1
            if span is not None:
                lo, hi = value_start + span[0], value_start + span[1]
                begin, stop = offsets[lo], offsets[hi - 1] + 1
                if stop - begin == hi - lo:  # on one line: the span in the file is the value
                    default = ArgDefault(logical[lo:hi], begin, stop, _line_at(text, begin))
                    defaults.append(default)
                    if is_global:  # a later global default is what Docker reads again
                        global_default, emptied = default, None
                    continue
            problems.append(
                ArgProblem(
                    _line_at(text, first),
                    f"the default of ARG {name} is written across lines, with escapes or with"
                    " partial quotes; uvdock cannot edit it exactly: write it as"
                    f" `ARG {name}=IMAGE` on one line",
                )
            )
    return defaults, problems if emptied is None else [*problems, emptied]
