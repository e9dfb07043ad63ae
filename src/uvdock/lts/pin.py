"""Change LTS pins in place: validate `name==version` / `name @ URL` specs, plan the new text.

Only the version or URL of a named pin changes. The file keeps its spelling of the name,
its extras, its marker, its options and comment (at the same column when the new text
fits, else one space after it), its line endings and its final newline or lack of one.
Several specs are validated together: one bad spec refuses them all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.files.textlines import join_lines
from uvdock.lts.requirements import NAME, LtsFile, Pin, cut_line, parse, read_requirement
from uvdock.project.names import normalize_name
from uvdock.ui.redact import url_credentials

_SPEC = re.compile(
    rf"^(?P<name>{NAME})\s*(?:\[(?P<extras>[A-Za-z0-9._,\s-]*)\])?\s*"
    r"(?:(?P<op>===|==|~=|!=|<=|>=|<|>)\s*(?P<version>.*?)|@\s*(?P<url>.*?))?\s*$",
    re.DOTALL,
)
# What a direct URL may contain: unreserved and the delimiters URLs need. No whitespace,
# quotes, `;`, `$`, backticks, `|`, `<`, `>`, `\`, parentheses or `*`: the text lands in a
# requirements file and in copy-pasteable commands, where those change meaning.
_URL_CHARS = r"[A-Za-z0-9\-._~:/?#@=+%,&]"
_URL = re.compile(rf"^[A-Za-z][A-Za-z0-9+.-]*://{_URL_CHARS}+$")
_SHELL_METACHARACTERS = frozenset(";|&$`<>\\\"'(){}*?!~")


class PinSpec(NamedTuple):
    raw: str
    name: str  # as the user typed it
    key: str
    extras: tuple[str, ...] | None  # None when the spec names none
    version: str | None
    url: str | None

    def requirement_text(self) -> str:
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        pinned = f" @ {self.url}" if self.url is not None else f"=={self.version}"
        return f"{self.name}{extras}{pinned}"


class PinChange(NamedTuple):
    name: str  # the file's spelling
    line: int
    old: str  # the requirement text before
    new: str  # and after
    added: bool = False


class PinPlan(NamedTuple):
    new_text: str
    changes: list[PinChange]
    unchanged: list[Pin]  # already pinned exactly as asked


def _refuse(raw: str, why: str) -> InputRefused:
    return InputRefused(f"SPEC {raw!r}: {why}", hint="a SPEC is name==VERSION or 'name @ URL'")


def _shown(chars: set[str]) -> str:
    return " ".join(repr(ch) for ch in sorted(chars))


def _url_problem(url: str) -> str | None:
    if not url:
        return "empty URL"
    if url_credentials(url):
        return "the URL carries credentials; never write them into the file"
    if _URL.match(url):
        return None
    bad = {ch for ch in url if not re.fullmatch(_URL_CHARS, ch)}
    return f"character(s) {_shown(bad)} are not allowed in the URL" if bad else "not a valid URL"


def _version_problem(name: str, op: str | None, version: str) -> str | None:
    if op is None:
        return f"needs an exact version: {name}==VERSION"
    if op != "==":
        return f"`{op}` is not an exact pin; LTS pins are {name}==VERSION"
    if not version:
        return "empty version"
    if "*" in version:
        return "a wildcard version is a range, not an exact pin"
    # `!` is PEP 440's epoch (1!2.0); read_requirement judges the rest, in parse_spec
    bad = set(version) & (_SHELL_METACHARACTERS - {"!"})
    return f"shell metacharacter(s) {_shown(bad)}" if bad else None


def _problem(raw: str, match: re.Match[str] | None) -> str | None:
    """What is wrong with the SPEC `raw`, in the order a user fixes it."""
    if not raw.strip():
        return "empty"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in raw):
        return "contains a newline or control character"
    if ";" in raw and isinstance(read_requirement(raw), str):  # packaging's reading
        return "the text after `;` is not a valid environment marker"
    if ";" in raw:
        return "markers are not taken from SPEC; the file keeps its own (edit it by hand to change one)"
    if match is None:
        bad = set(raw) & _SHELL_METACHARACTERS
        shape = "not name==VERSION or 'name @ URL'"
        return f"shell metacharacter(s) {_shown(bad)} are not allowed" if bad else shape
    name, op, version, url, extras = match.group("name", "op", "version", "url", "extras")
    if extras is not None and not all(re.fullmatch(NAME, e) for e in _listed(extras)):
        return "invalid extra name"
    return _url_problem(url) if url is not None else _version_problem(name, op, version or "")


def _listed(extras: str) -> tuple[str, ...]:
    return tuple(e.strip() for e in extras.split(",") if e.strip())


def parse_spec(raw: str) -> PinSpec:
    match = _SPEC.match(raw)
    if (why := _problem(raw, match)) is not None or match is None:
        raise _refuse(raw, str(why))
    name, extras = match["name"], match["extras"]
    listed = None if extras is None else _listed(extras)
    spec = PinSpec(raw, name, normalize_name(name), listed, match["version"], match["url"])
    # The line we would write must read back as exactly the requirement we mean.
    written = read_requirement(spec.requirement_text())
    if spec.version and (isinstance(written, str) or written.version != spec.version):
        raise _refuse(raw, f"invalid version {spec.version!r} (not PEP 440)")
    if isinstance(written, str) or normalize_name(written.name) != spec.key:
        raise _refuse(raw, "not a valid requirement")
    if (written.version, written.url) != (spec.version, spec.url):
        raise _refuse(raw, "not a valid requirement")
    return spec


def parse_specs(raws: Sequence[str]) -> list[PinSpec]:
    specs = [parse_spec(raw) for raw in raws]
    seen: dict[str, PinSpec] = {}
    for spec in specs:
        if (first := seen.setdefault(spec.key, spec)) is not spec:
            raise InputRefused(f"{first.raw!r} and {spec.raw!r} name the same package")
    return specs


def rewrite_requirement(requirement: str, pin: Pin, spec: PinSpec) -> str:
    """The pin's requirement text with only its version or URL replaced: the text between
    name[extras] and the marker is rewritten, keeping its spacing where it can."""
    head = re.match(rf"\s*{NAME}(?:\s*\[[^\]]*\])?", requirement)
    end = head.end() if head else 0  # parse() read a name, so there is a head
    rest = requirement[end:]
    # A URL may hold `;`: its marker starts at a `;` after whitespace.
    marker_at = re.search(r"\s;" if pin.url is not None else ";", rest)
    cut = marker_at.end() - 1 if marker_at else len(rest)
    core, marker = rest[:cut], rest[cut:]
    body = core.strip()
    lead, trail = core[: len(core) - len(core.lstrip())], core[len(core.rstrip()) :]
    if spec.url is None:
        exact = re.fullmatch(r"(==\s*)[^\s,]+", body)
        new = f"{'' if pin.url is not None else lead}{exact[1] if exact else '=='}{spec.version}"
        return requirement[:end] + new + trail + marker
    at = re.match(r"@\s*", body)  # the file's URL and its spacing
    new = f"{lead or ' '}{at[0]}" if at else " @ "
    return requirement[:end] + new + spec.url + (trail or (" " if marker else "")) + marker


def _edit_line(lts: LtsFile, pin: Pin, spec: PinSpec) -> tuple[str, str, str]:
    """(old requirement, new requirement, new content of the pin's first physical line)."""
    if pin.options:
        raise InputRefused(
            f"line {pin.line}: `{pin.name}` carries pip options (--hash ...) "
            "that would no longer match a new version",
            hint="regenerate the file (e.g. uv pip compile --generate-hashes) instead",
        )
    parts = cut_line(lts.lines[pin.line - 1].content)
    if parts.requirement != pin.spec:
        raise InputRefused(f"line {pin.line}: `{pin.name}` spans several lines; edit it by hand")
    ours, theirs = (sorted(map(normalize_name, e)) for e in (spec.extras or (), pin.extras))
    if spec.extras is not None and ours != theirs:
        raise InputRefused(
            f"SPEC {spec.raw!r}: line {pin.line} has extras [{','.join(pin.extras)}]; "
            "the file keeps its extras (leave them out of SPEC, or edit the line by hand)"
        )
    new = rewrite_requirement(parts.requirement, pin, spec)
    gap = parts.gap
    if parts.tail and gap and "\t" not in gap:
        gap = " " * max(1, len(parts.requirement) + len(gap) - len(new))
    return parts.requirement, new, parts.indent + new + gap + parts.tail


def plan_pins(text: str, specs: Sequence[PinSpec], *, add: bool) -> PinPlan:
    lts = parse(text)
    lines, changes, unchanged, appended = list(lts.lines), [], [], []
    for spec in specs:
        if len(found := lts.find(spec.key)) > 1:
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
        if (pin.version, pin.url) == (spec.version, spec.url):
            unchanged.append(pin)
            continue
        old, new, content = _edit_line(lts, pin, spec)
        lines[pin.line - 1] = lines[pin.line - 1]._replace(content=content)
        changes.append(PinChange(pin.name, pin.line, old, new))
    new_text, ending = join_lines(lines), lts.line_ending
    for number, spec in enumerate(appended, len(lines) + 1):
        line = spec.requirement_text()
        # A file without a final newline still has none.
        new_text += line + ending if not new_text or new_text.endswith("\n") else ending + line
        changes.append(PinChange(spec.name, number, "", line, added=True))
    # The new text must read back as exactly what was asked, and break no other line.
    after = parse(new_text)
    if after.problems != lts.problems:
        raise InputRefused("the edit would leave an unparsable line; nothing was changed")
    for spec in specs:
        found = after.find(spec.key)
        if len(found) != 1 or (found[0].version, found[0].url) != (spec.version, spec.url):
            raise InputRefused(f"SPEC {spec.raw!r}: the edited line does not read back as asked")
    return PinPlan(new_text, sorted(changes, key=lambda c: c.line), unchanged)
