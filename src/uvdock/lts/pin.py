"""Change LTS pins in place: validate `name==version` / `name @ URL` specs, plan the new text.

Only the version or URL of a named pin changes. The file keeps its spelling of the name,
its extras, its marker, its options and comment (at the same column when the new text
fits, else one space after it), its line endings and its final newline or lack of one.
Several specs are validated together: one bad spec refuses them all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from uvdock.errors import InputRefused
from uvdock.files.textlines import join_lines
from uvdock.lts.requirements import (
    LtsFile,
    Pin,
    cut_line,
    parse,
    read_requirement,
)
from uvdock.project.names import normalize_name
from uvdock.ui.redact import url_credentials

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_SPEC = re.compile(
    rf"^(?P<name>{_NAME})\s*(?:\[(?P<extras>[A-Za-z0-9._,\s-]*)\])?\s*"
    r"(?:(?P<op>===|==|~=|!=|<=|>=|<|>)\s*(?P<version>.*?)|@\s*(?P<url>.*?))?\s*$",
    re.DOTALL,
)
# The characters of a PEP 440 version (validated in full by read_requirement).
_VERSION_CHARS = re.compile(r"^[A-Za-z0-9.+!_-]+$")
# What a direct URL may contain: unreserved and the delimiters URLs need. No whitespace,
# quotes, `;`, `$`, backticks, `|`, `<`, `>`, `\`, parentheses or `*`: the text lands in a
# requirements file and in copy-pasteable commands, where those change meaning.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9\-._~:/?#@=+%,&]+$")
_SHELL_METACHARACTERS = frozenset(";|&$`<>\\\"'(){}*?!~")
_URL_CHAR = re.compile(r"[A-Za-z0-9\-._~:/?#@=+%,&]")


@dataclass(frozen=True)
class PinSpec:
    raw: str
    name: str  # as the user typed it
    key: str
    extras: tuple[str, ...] | None  # None when the spec names none
    version: str | None
    url: str | None

    def requirement_text(self) -> str:
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        if self.url is not None:
            return f"{self.name}{extras} @ {self.url}"
        return f"{self.name}{extras}=={self.version}"

    @property
    def target(self) -> str:
        return self.url if self.url is not None else f"=={self.version}"


@dataclass(frozen=True)
class PinChange:
    name: str  # the file's spelling
    line: int
    old: str  # the requirement text before
    new: str  # and after
    added: bool = False


@dataclass(frozen=True)
class PinPlan:
    new_text: str
    changes: list[PinChange]
    unchanged: list[Pin]  # already pinned exactly as asked


def _show(chars: Sequence[str]) -> str:
    return " ".join(repr(ch) for ch in chars)


def _refuse(raw: str, why: str) -> InputRefused:
    return InputRefused(f"SPEC {raw!r}: {why}", hint="a SPEC is name==VERSION or 'name @ URL'")


def _check_text(raw: str) -> None:
    """Refuse what no SPEC may hold: nothing, control characters, an environment marker."""
    if not raw.strip():
        raise _refuse(raw, "empty")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in raw):
        raise _refuse(raw, "contains a newline or control character")
    if ";" in raw:
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            Requirement(raw)
        except InvalidRequirement:
            raise _refuse(raw, "the text after `;` is not a valid environment marker") from None
        raise _refuse(
            raw,
            "markers are not taken from SPEC; the file keeps its own "
            "(edit it by hand to change one)",
        )


def _match(raw: str) -> re.Match[str]:
    match = _SPEC.match(raw)
    if match is None:
        bad = sorted({ch for ch in raw if ch in _SHELL_METACHARACTERS})
        if bad:
            raise _refuse(raw, f"shell metacharacter(s) {_show(bad)} are not allowed")
        raise _refuse(raw, "not name==VERSION or 'name @ URL'")
    return match


def _extras(raw: str, text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    extras = tuple(e.strip() for e in text.split(",") if e.strip())
    if not all(re.fullmatch(_NAME, e) for e in extras):
        raise _refuse(raw, "invalid extra name")
    return extras


def _check_url(raw: str, url: str) -> None:
    if not url:
        raise _refuse(raw, "empty URL")
    if url_credentials(url):
        raise _refuse(raw, "the URL carries credentials; never write them into the file")
    if not _URL.match(url):
        bad = sorted({ch for ch in url if not _URL_CHAR.match(ch)})
        what = f"character(s) {_show(bad)} are not allowed in the URL" if bad else "not a valid URL"
        raise _refuse(raw, what)


def _check_version(raw: str, name: str, op: str | None, version: str | None) -> None:
    if op is None:
        raise _refuse(raw, f"needs an exact version: {name}==VERSION")
    if op != "==":
        raise _refuse(raw, f"`{op}` is not an exact pin; LTS pins are {name}==VERSION")
    if not version:
        raise _refuse(raw, "empty version")
    if "*" in version:
        raise _refuse(raw, "a wildcard version is a range, not an exact pin")
    if not _VERSION_CHARS.match(version):
        bad = sorted({ch for ch in version if ch in _SHELL_METACHARACTERS})
        what = f"shell metacharacter(s) {_show(bad)}" if bad else f"invalid version {version!r}"
        raise _refuse(raw, what)


def _check_reads_back(spec: PinSpec) -> None:
    """The line we would write must read back as exactly the requirement we mean."""
    written = read_requirement(spec.requirement_text())
    if isinstance(written, str):
        why = (
            f"invalid version {spec.version!r} (not PEP 440)"
            if spec.version
            else "not a valid requirement"
        )
        raise _refuse(spec.raw, why)
    if (normalize_name(written.name), written.version, written.url) != (
        spec.key,
        spec.version,
        spec.url,
    ):
        raise _refuse(spec.raw, "not a valid requirement")


def parse_spec(raw: str) -> PinSpec:
    """Validate one SPEC; raise InputRefused naming what is wrong with it."""
    _check_text(raw)
    match = _match(raw)
    name, op, version, url = match["name"], match["op"], match["version"], match["url"]
    extras = _extras(raw, match["extras"])
    if url is not None:
        _check_url(raw, url)
    else:
        _check_version(raw, name, op, version)
    spec = PinSpec(raw, name, normalize_name(name), extras, version, url)
    _check_reads_back(spec)
    return spec


def parse_specs(raws: Sequence[str]) -> list[PinSpec]:
    specs = [parse_spec(raw) for raw in raws]
    seen: dict[str, PinSpec] = {}
    for spec in specs:
        if spec.key in seen:
            raise InputRefused(f"{seen[spec.key].raw!r} and {spec.raw!r} name the same package")
        seen[spec.key] = spec
    return specs


def _new_core(pin_is_url: bool, core: str, spec: PinSpec, has_marker: bool) -> str:
    """The text between name[extras] and the marker, rewritten for the spec."""
    body = core.strip()
    lead = core[: len(core) - len(core.lstrip())]
    trail = core[len(core.rstrip()) :]
    if spec.url is not None:
        lead = lead if pin_is_url and lead else " "
        trail = trail if trail or not has_marker else " "
        return (
            f"{lead}@ {spec.url}{trail}"
            if not pin_is_url
            else f"{lead}{_keep_at(body)}{spec.url}{trail}"
        )
    exact = re.fullmatch(r"(==\s*)([^\s,]+)", body)
    if exact and not pin_is_url:
        return f"{lead}{exact.group(1)}{spec.version}{trail}"
    if pin_is_url:
        lead = ""
    return f"{lead}=={spec.version}{trail}"


def _keep_at(body: str) -> str:
    """The `@ ` (with its spacing) that introduces the file's URL."""
    match = re.match(r"@\s*", body)
    return match.group(0) if match else "@ "


def rewrite_requirement(requirement: str, pin: Pin, spec: PinSpec) -> str:
    """The pin's requirement text with only its version or URL replaced."""
    head = re.match(rf"\s*{_NAME}(?:\s*\[[^\]]*\])?", requirement)
    if head is None:  # parse() accepted it, so this cannot happen for a valid pin
        raise InputRefused(f"line {pin.line}: cannot locate the name of `{requirement}`")
    rest = requirement[head.end() :]
    if pin.url is not None:
        marker_at = re.search(r"\s;", rest)
        cut = marker_at.start() + (len(marker_at.group(0)) - 1) if marker_at else len(rest)
    else:
        cut = rest.find(";") if ";" in rest else len(rest)
    core, marker = rest[:cut], rest[cut:]
    return (
        requirement[: head.end()]
        + _new_core(pin.url is not None, core, spec, bool(marker))
        + marker
    )


def _extras_key(extras: Sequence[str]) -> list[str]:
    return sorted(normalize_name(e) for e in extras)


def _edit_line(lts: LtsFile, pin: Pin, spec: PinSpec) -> tuple[str, str, str]:
    """(old requirement, new requirement, new content of the pin's first physical line)."""
    content = lts.lines[pin.line - 1].content
    parts = cut_line(content)
    if parts.requirement != pin.spec:
        raise InputRefused(
            f"line {pin.line}: `{pin.name}` spans several lines; edit it by hand",
        )
    if spec.extras is not None and _extras_key(spec.extras) != _extras_key(pin.extras):
        raise InputRefused(
            f"SPEC {spec.raw!r}: line {pin.line} has extras [{','.join(pin.extras)}]; "
            "the file keeps its extras (leave them out of SPEC, or edit the line by hand)"
        )
    new_requirement = rewrite_requirement(parts.requirement, pin, spec)
    gap = parts.gap
    if parts.tail and gap and "\t" not in gap:
        width = len(parts.indent) + len(new_requirement)
        gap = " " * max(1, parts.tail_column - width)
    return parts.requirement, new_requirement, parts.indent + new_requirement + gap + parts.tail


def _append(text: str, ending: str, line: str) -> str:
    if not text:
        return line + ending
    if text.endswith("\n"):
        return text + line + ending
    return text + ending + line  # the file had no final newline: it still has none


def plan_pins(text: str, specs: Sequence[PinSpec], *, add: bool) -> PinPlan:
    """The new file text for these specs, or InputRefused with nothing planned."""
    lts = parse(text)
    lines = list(lts.lines)
    changes: list[PinChange] = []
    unchanged: list[Pin] = []
    appended: list[PinSpec] = []
    for spec in specs:
        found = lts.find(spec.key)
        if len(found) > 1:
            where = ", ".join(str(p.line) for p in found)
            raise InputRefused(
                f"`{spec.name}` is pinned on several lines ({where}); edit them by hand"
            )
        if not found:
            if not add:
                raise InputRefused(
                    f"`{spec.name}` is not in the LTS pin set",
                    hint="pass --add to append it as a new pin",
                )
            appended.append(spec)
            continue
        pin = found[0]
        if spec.version is not None and pin.version == spec.version and pin.url is None:
            unchanged.append(pin)
            continue
        if spec.url is not None and pin.url == spec.url:
            unchanged.append(pin)
            continue
        if pin.options:
            raise InputRefused(
                f"line {pin.line}: `{pin.name}` carries pip options (--hash ...) "
                "that would no longer match a new version",
                hint="regenerate the file (e.g. uv pip compile --generate-hashes) instead",
            )
        old, new, content = _edit_line(lts, pin, spec)
        lines[pin.line - 1] = lines[pin.line - 1]._replace(content=content)
        changes.append(PinChange(pin.name, pin.line, old, new))
    new_text = join_lines(lines)
    total_lines = len(lines)
    for spec in appended:
        new_text = _append(new_text, lts.line_ending, spec.requirement_text())
        total_lines += 1
        changes.append(PinChange(spec.name, total_lines, "", spec.requirement_text(), added=True))
    _verify(lts, parse(new_text), specs)
    return PinPlan(new_text, sorted(changes, key=lambda c: c.line), unchanged)


def _verify(before: LtsFile, after: LtsFile, specs: Sequence[PinSpec]) -> None:
    """The new text must read back as exactly what was asked, and break no other line."""
    if after.problems != before.problems:
        raise InputRefused("the edit would leave an unparsable line; nothing was changed")
    for spec in specs:
        found = after.find(spec.key)
        if len(found) != 1 or (found[0].version, found[0].url) != (spec.version, spec.url):
            raise InputRefused(f"SPEC {spec.raw!r}: the edited line does not read back as asked")
