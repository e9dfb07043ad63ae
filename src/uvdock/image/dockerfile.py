"""A Dockerfile's instructions as Docker reads them (docs.docker.com/reference/dockerfile): the
one reader every part of uvdock uses. Each instruction keeps each character's offset in the
file, so a value can be edited exactly."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import NamedTuple

from uvdock.files.textlines import Line, split_lines

_DIRECTIVE = re.compile(r"#[ \t]*(?P<key>[A-Za-z]+)[ \t]*=[ \t]*(?P<value>\S*)[ \t]*")
_HEREDOC = re.compile(r"<<(?P<dash>-?)(?P<quote>[\"']?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?P=quote)")
_VARIABLE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<op>[-+])(?P<word>[^}]*))?\}"
    r"|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


class Heredoc(NamedTuple):
    word: str
    line: int  # 1-based line of the body's first line
    body: tuple[str, ...]  # its lines, without endings


class Instruction(NamedTuple):
    keyword: str  # upper case
    line: int  # 1-based first line
    text: str  # the logical text (continuations joined), keyword included
    offsets: tuple[int, ...]  # per character of `text`, its offset in the file
    heredocs: tuple[Heredoc, ...] = ()

    @property
    def arguments(self) -> str:  # the text after the keyword, blanks around it removed
        return self.text.lstrip(" \t\ufeff")[len(self.keyword) :].strip(" \t")


class Dockerfile(NamedTuple):
    escape: str
    instructions: tuple[Instruction, ...]


def _escape_char(lines: list[Line]) -> str:
    """`\\` unless a parser directive at the very top says `# escape=``."""
    for line in lines:
        if (match := _DIRECTIVE.fullmatch(line.content.lstrip("\ufeff"))) is None:
            break
        if match["key"].lower() == "escape" and match["value"] in ("\\", "`"):
            return match["value"]
    return "\\"


def _continues(content: str, escape: str) -> int | None:  # where the escape ending it is
    stripped = content.rstrip(" \t")
    return len(stripped) - 1 if stripped.endswith(escape) else None


def _skippable(content: str) -> bool:
    return content.lstrip(" \t\ufeff")[:1] in ("", "#")


def _heredocs(text: str, lines: list[Line], index: int) -> tuple[tuple[Heredoc, ...], int]:
    """The bodies the instruction opens, in order, and the index of the line after them."""
    found: list[Heredoc] = []
    for match in _HEREDOC.finditer(text):
        body: list[str] = []
        first = lines[index].number if index < len(lines) else len(lines) + 1
        while index < len(lines):
            content = lines[index].content
            index += 1
            if (content.lstrip("\t") if match["dash"] else content) == match["word"]:
                break
            body.append(content)
        found.append(Heredoc(match["word"], first, tuple(body)))
    return tuple(found), index


@lru_cache(maxsize=16)  # one parse per text: a scan reads a Dockerfile for pins and stages
def read(text: str) -> Dockerfile:
    lines = split_lines(text)
    escape = _escape_char(lines)
    instructions: list[Instruction] = []
    index = 0
    while index < len(lines):
        first = lines[index]
        index += 1
        if _skippable(first.content):
            continue
        parts = [first]
        while _continues(parts[-1].content, escape) is not None and index < len(lines):
            following = lines[index]
            index += 1
            if not _skippable(following.content):
                parts.append(following)
        bodies = [(part.offset, part.content[: _continues(part.content, escape)]) for part in parts]
        joined = "".join(body for _, body in bodies)
        offsets = tuple(at for start, body in bodies for at in range(start, start + len(body)))
        keyword = joined.lstrip(" \t\ufeff").split(None, 1)[0].upper()
        opens = joined if keyword in ("RUN", "COPY", "ADD") else ""
        heredocs, index = _heredocs(opens, lines, index)
        instructions.append(Instruction(keyword, first.number, joined, offsets, heredocs))
    return Dockerfile(escape, tuple(instructions))


def words(text: str, escape: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, plain) of each blank-separated word; plain: no escape, its quotes closed."""
    position = 0
    size = len(text)
    while position < size:
        if text[position] in " \t":
            position += 1
            continue
        start, plain, quote = position, True, ""
        while position < size and (quote or text[position] not in " \t"):
            char = text[position]
            if char == escape and quote != "'":
                plain = False
                position += 2
                continue
            if quote and char == quote:
                quote = ""
            elif not quote and char in "\"'":
                quote = char
            position += 1
        yield start, min(position, size), plain and not quote


def expand(text: str, variables: Mapping[str, str]) -> tuple[str, list[str]]:
    """`text` expanded as Docker does, and the names it had no value for ("", or `:-` default)."""
    unknown: list[str] = []

    def value(match: re.Match[str]) -> str:
        name = match["braced"] or match["bare"]
        known = variables.get(name)
        if match["op"] == "+":
            return match["word"] if known else ""
        if known is None:
            unknown.append(name)
        if match["op"] == "-" and not known:
            return str(match["word"])
        return known or ""

    return _VARIABLE.sub(value, text), unknown


def quoted(raw: str) -> bool:
    return len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'"


def declarations(instruction: Instruction, escape: str) -> list[tuple[str, str | None, int, bool]]:
    """An ARG's words: (name, `=value` as written or None, index in the text, plain)."""
    text = instruction.text
    head = len(text) - len(text.lstrip(" \t\ufeff")) + len(instruction.keyword)
    found: list[tuple[str, str | None, int, bool]] = []
    for start, end, plain in words(text[head:], escape):
        name, equals, raw = text[head + start : head + end].partition("=")
        found.append((name, raw if equals else None, head + start, plain))
    return found


class Stage(NamedTuple):
    line: int
    written: str  # the image as written (`${BASE_IMAGE}`)
    image: str  # expanded with the global ARGs ("" when a variable has no value)
    alias: str  # "" when the stage has no name
    variables: tuple[str, ...]  # the global ARGs the image names
    parent: int | None  # the index of the earlier stage it builds on, None: an image
    start: int  # offset of `written` in the file (a FROM without an image: its end)


def global_args(
    dockerfile: Dockerfile, anywhere: bool = False
) -> dict[str, tuple[str | None, int]]:
    """Each ARG before the first FROM (`anywhere`: any): its last default (None: none) and line."""
    found: dict[str, tuple[str | None, int]] = {}
    for instruction in dockerfile.instructions:
        if instruction.keyword == "FROM" and not anywhere:
            break
        if instruction.keyword == "ARG":
            for name, raw, _, _ in declarations(instruction, dockerfile.escape):
                default = raw[1:-1] if raw is not None and quoted(raw) else raw
                found[name] = (default, instruction.line)
    return found


def stages(dockerfile: Dockerfile, build_args: Mapping[str, str] | None = None) -> list[Stage]:
    """Every FROM, its image expanded with the global ARGs (a build argument wins)."""
    values = {name: d for name, (d, _) in global_args(dockerfile).items() if d is not None}
    values.update(build_args or {})
    found: list[Stage] = []
    for instruction in dockerfile.instructions:
        if instruction.keyword != "FROM":
            continue
        parts = [w for w in instruction.arguments.split() if not w.startswith("--")]
        written = parts[0] if parts else ""
        alias = parts[2] if len(parts) >= 3 and parts[1].lower() == "as" else ""
        image, _ = expand(written, values)
        names = tuple(m["braced"] or m["bare"] for m in _VARIABLE.finditer(written))
        aliases = [stage.alias.lower() for stage in found]
        parent = aliases.index(image.lower()) if image.lower() in aliases else None
        text, offsets = instruction.text, instruction.offsets
        at = text.find(written, len(text) - len(text.lstrip()) + len("FROM"))
        start = offsets[at] if written else offsets[-1] + 1
        found.append(Stage(instruction.line, written, image, alias, names, parent, start))
    return found


def base_of(found: list[Stage], target: str | None) -> Stage | None:
    """The stage whose image a build of `target` (None: the last stage) starts from."""
    aliases = [stage.alias.lower() for stage in found]
    if not found or (target is not None and target.lower() not in aliases):
        return None
    index = len(found) - 1 if target is None else aliases.index(target.lower())
    while found[index].parent is not None:
        index = found[index].parent  # type: ignore[assignment]
    return found[index]


class ArgDefault(NamedTuple):
    value: str  # as Docker reads it (quotes removed)
    start: int  # span of the value in the file's text (inside quotes, if any)
    end: int
    line: int  # 1-based line of the value


class ArgProblem(NamedTuple):
    line: int  # 1-based
    message: str


# Docker reads the last global declaration: an empty one leaves FROM with no image.
_EMPTIED = (
    "`ARG {0}=` replaces the default of line {1} with an empty value (Docker reads the last"
    " one), so FROM gets no image: remove one of the two"
)
_SPLIT = (
    "the default of ARG {0} is written across lines, with escapes or with partial quotes;"
    " uvdock cannot edit it exactly: write it as `ARG {0}=IMAGE` on one line"
)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def arg_defaults(text: str, name: str) -> tuple[list[ArgDefault], list[ArgProblem]]:
    """Every default of ARG `name` (case-sensitive), and the ones uvdock cannot edit exactly."""
    dockerfile = read(text)
    defaults: list[ArgDefault] = []
    problems: list[ArgProblem] = []
    global_default: ArgDefault | None = None
    emptied: ArgProblem | None = None
    is_global = True
    for instruction in dockerfile.instructions:
        is_global = is_global and instruction.keyword != "FROM"
        if instruction.keyword != "ARG":
            continue
        offsets = instruction.offsets
        for key, raw, index, plain in declarations(instruction, dockerfile.escape):
            if key != name or raw is None:
                continue  # another variable, or a declaration without a default
            line = line_of(text, offsets[index])
            if raw in ("", '""', "''"):  # an empty default is no pin, but replaces an earlier one
                if is_global and global_default is not None:
                    emptied = ArgProblem(line, _EMPTIED.format(name, global_default.line))
                continue
            # Editable: bare, or wholly "double" or 'single' quoted, on one line.
            quote = int(quoted(raw))
            inner = raw[quote : len(raw) - quote]
            lo = index + len(key) + 1 + quote
            hi = lo + len(inner)
            split = offsets[hi - 1] + 1 - offsets[lo] != hi - lo
            if not plain or "'" in inner or '"' in inner or split:
                problems.append(ArgProblem(line, _SPLIT.format(name)))
                continue
            at = offsets[lo]  # the value is on one line: its span in the file is contiguous
            default = ArgDefault(inner, at, at + len(inner), line_of(text, at))
            defaults.append(default)
            if is_global:  # a later global default is what Docker reads again
                global_default, emptied = default, None
    return defaults, problems if emptied is None else [*problems, emptied]
