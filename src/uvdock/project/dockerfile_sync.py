"""What the lane's Dockerfile itself syncs into the image's venv: its `uv sync` selection
(`--extra ${IMAGE_TYPE} ... ${FLASH_MLA_GROUP}` on Megatron-LM), which a `uvdock sync` must
not shrink. Rebuilt from build args, ARG, ENV, shell variables and `if` tests on IMAGE_TYPE
or the architecture; a test it cannot evaluate is noted, not taken.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import NamedTuple

from uvdock.image.dockerfile import declarations, expand, quoted, read

_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*?)\s*$")
_IF = re.compile(r"^\s*(el)?if\s+\[\s+(.+?)\s+\]\s*;?\s*(?:then)?\s*$")
_TEST = re.compile(r'^("?)(.+?)\1\s+(!?=|==)\s+("?)(.*?)\4$')
_UV_SYNC = re.compile(r"(?:^|\s)uv\s+sync(?:\s|$)")
_MACHINE_WORDS = ("$(uname -m)", "$(arch)", "`uname -m`")
_MACHINE = {"amd64": "x86_64", "arm64": "aarch64"}


class SyncSelection(NamedTuple):
    extras: tuple[str, ...]
    groups: tuple[str, ...]
    notes: tuple[str, ...]
    found: bool  # a `uv sync` line that installs the project was found


def _shell_lines(body: tuple[str, ...]) -> list[str]:
    """A heredoc's script as the shell reads it: continuations joined, comments dropped."""
    lines = [""]
    for line in map(str.strip, body):
        if line.startswith("#") and not lines[-1]:
            continue
        continued = line.endswith("\\")
        lines[-1] += line[:-1] + " " if continued else line
        if not continued:
            lines.append("")
    return [line for line in lines if line]


class _Reader:
    def __init__(self, image_type: str, platform: str, build_args: Mapping[str, str]) -> None:
        self.variables: dict[str, str] = {}
        # BuildKit sets TARGETARCH from the platform, whatever a build argument says.
        self.build_args = dict(build_args, IMAGE_TYPE=image_type, TARGETARCH=platform)
        self.machine = _MACHINE.get(platform, platform)
        # Per open `if`: does the current branch run, did an earlier one (None: unknown)?
        self.blocks: list[tuple[bool | None, bool | None]] = []
        self.extras: list[str] = []
        self.groups: list[str] = []
        self.notes: list[str] = []
        self.found = False

    def declare(self, name: str, default: str | None) -> None:
        """An ARG or ENV: a build argument wins, then the default as written."""
        if name in self.build_args:
            self.variables[name] = self.build_args[name]
        elif default is not None:
            self.variables[name] = expand(default, self.variables)[0]

    def _evaluate(self, condition: str) -> bool | None:
        test = _TEST.match(condition.strip())
        if test is None:
            return None
        sides: list[str] = []
        for side in (test[2], test[5]):
            for word in _MACHINE_WORDS:
                side = side.replace(word, self.machine)
            value, unknown = expand(side, self.variables)
            if "$(" in side or unknown:
                return None
            sides.append(value)
        return (sides[0] == sides[1]) != (test[3] == "!=")

    def _active(self) -> bool | None:
        states = [current for current, _ in self.blocks]
        return False if False in states else None if None in states else True

    def line(self, line: str) -> None:
        for statement in re.split(r"\s*(?:;|&&)\s*(?=\S)", line):
            self._statement(statement.strip())

    def _statement(self, statement: str) -> None:
        keyword, _, rest = statement.partition(" ")
        if keyword == "fi":
            self.blocks = self.blocks[:-1]
            return
        if keyword == "else":
            self._open(None, elif_=True)
        if keyword in ("then", "else"):
            if not rest:
                return
            statement = rest.strip()
        opened = _IF.match(statement)
        if opened:
            self._open(opened.group(2), elif_=bool(opened.group(1)))
        elif _UV_SYNC.search(statement):
            if self._active() is not False:
                self._sync(statement)
        elif (assigned := _ASSIGN.match(statement)) and self._active():
            try:
                words = shlex.split(assigned[2])
            except ValueError:
                words = [assigned[2]]
            self.variables[assigned[1]] = expand(" ".join(words), self.variables)[0]

    def _open(self, condition: str | None, *, elif_: bool) -> None:
        """An `if` or `elif` test (None: an `else`, an `elif` that always holds)."""
        taken = True if condition is None else self._evaluate(condition)
        decided = False
        if not elif_:
            self.blocks.append((taken, taken))
        elif self.blocks:  # an `elif`: it does not matter when an earlier branch ran
            done = self.blocks[-1][1]
            decided = done is True
            # An earlier test unknown: this branch runs only if that one did not.
            current = (False if taken is False else None) if done is None else not done and taken
            either = True if True in (done, taken) else None if None in (done, taken) else False
            self.blocks[-1] = (current, either)
        if taken is None and not decided:
            self.notes.append(f"condition not evaluated, its selection not taken: {condition}")

    def _sync(self, statement: str) -> None:
        expanded, unknown = expand(statement, self.variables)
        self.notes += [
            f"`${name}` in the Dockerfile's uv sync line has no known value" for name in unknown
        ]
        sync = _UV_SYNC.search(expanded)
        try:
            words = shlex.split(expanded[sync.start() if sync else 0 :])
        except ValueError:
            self.notes.append(f"uv sync line not read: {statement}")
            return
        if any(word.partition("=")[0] == "--only-group" for word in words):
            return
        self.found = True
        for word, following in zip(words, [*words[1:], None], strict=True):
            flag, equals, value = word.partition("=")
            found = value if equals else following
            target = self.extras if flag == "--extra" else self.groups
            if flag in ("--extra", "--group") and found is not None and found not in target:
                target.append(found)


def read_selection(
    text: str,
    *,
    image_type: str,
    platform: str = "amd64",
    build_args: Mapping[str, str] | None = None,
) -> SyncSelection:
    reader = _Reader(image_type, platform, build_args or {})
    dockerfile = read(text)
    for instruction in dockerfile.instructions:
        if instruction.keyword == "FROM":
            reader.blocks.clear()
        elif instruction.keyword in ("ARG", "ENV"):
            for name, raw, _, _ in declarations(instruction, dockerfile.escape):
                reader.declare(name, raw[1:-1] if raw is not None and quoted(raw) else raw)
        elif instruction.keyword == "RUN":
            # The script is the heredoc's body: the instruction's own text ends where it opens.
            script = instruction.arguments
            script = script.split("<<", 1)[0] if instruction.heredocs else script
            reader.line(re.sub(r"^(?:--\S+\s+)*", "", script))  # RUN's own --flags
            for heredoc in instruction.heredocs:
                for line in _shell_lines(heredoc.body):
                    reader.line(line)
                reader.blocks.clear()
    return SyncSelection(
        tuple(reader.extras), tuple(reader.groups), tuple(reader.notes), reader.found
    )
