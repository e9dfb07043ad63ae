"""What the lane's Dockerfile itself syncs into the image's venv: the extras and groups of
its `uv sync` line(s), read as text.

Megatron-LM builds /opt/venv with
`uv sync --extra ${IMAGE_TYPE} --extra mlm --extra ssm --extra te ${FLASH_MLA_GROUP} ...`,
where FLASH_MLA_GROUP is set to `--group no_pypi_wheels` inside `if [ "$IMAGE_TYPE" != "lts" ]`.
A `uvdock sync` that starts from less than this selection would uninstall what the image
installed, so the selection is rebuilt here: build args and ENV from the Dockerfile, the
lane's IMAGE_TYPE, shell variables assigned in the RUN script, and `if` tests on
IMAGE_TYPE or the architecture evaluated for the platform. A test it cannot evaluate is not
taken; it is named in a note. `uv sync --only-group X` lines (build tooling) are skipped.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import NamedTuple

from uvdock.image.dockerfile import expand as _expand
from uvdock.image.dockerfile import read

_ARG = re.compile(r"^\s*(?:ARG|ENV)\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?\s*$", re.I)
_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*?)\s*$")
_IF = re.compile(r"^\s*(el)?if\s+\[\s+(.+?)\s+\]\s*;?\s*(?:then)?\s*$")
_TEST = re.compile(r'^("?)(.+?)\1\s+(!?=|==)\s+("?)(.*?)\4$')
_RUN_PREFIX = re.compile(r"^\s*RUN\s+(?:--\S+\s+)*", re.I)
_UV_SYNC = re.compile(r"(?:^|\s)uv\s+sync(?:\s|$)")
_MACHINE_WORDS = ("$(uname -m)", "$(arch)", "`uname -m`")
_MACHINE = {"amd64": "x86_64", "arm64": "aarch64"}


class SyncSelection(NamedTuple):
    extras: tuple[str, ...]
    groups: tuple[str, ...]
    notes: tuple[str, ...]
    found: bool  # a `uv sync` line that installs the project was found


def _shell_lines(body: tuple[str, ...]) -> list[str]:
    """A heredoc's script as the shell reads its lines: `\\` continuations joined, comments
    dropped."""
    lines: list[str] = []
    pending = ""
    for raw in body:
        stripped = raw.strip()
        if stripped.startswith("#") and not pending:
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _either(first: bool | None, second: bool | None) -> bool | None:
    """Three-valued OR: True if either is, unknown if either is unknown, else False."""
    if first is True or second is True:
        return True
    return None if first is None or second is None else False


class _Branches:
    """The open `if` blocks: per block, whether the current branch runs and whether an
    earlier branch already ran (None: cannot tell)."""

    def __init__(self) -> None:
        self.blocks: list[tuple[bool | None, bool | None]] = []

    def open(self, taken: bool | None) -> None:
        self.blocks.append((taken, taken))

    def alternative(self, taken: bool | None) -> bool:
        """An `elif`; True when an earlier branch ran, so this one's test does not matter."""
        if not self.blocks:
            return False
        _, done = self.blocks[-1]
        current = False if done is True else (taken if done is False else _and_not_known(taken))
        self.blocks[-1] = (current, _either(done, taken))
        return done is True

    def otherwise(self) -> None:
        if self.blocks:
            _, done = self.blocks[-1]
            self.blocks[-1] = (None if done is None else not done, True)

    def close(self) -> None:
        if self.blocks:
            self.blocks.pop()

    def clear(self) -> None:
        self.blocks.clear()

    def active(self) -> bool | None:
        states = [current for current, _ in self.blocks]
        if False in states:
            return False
        return None if None in states else True


def _and_not_known(taken: bool | None) -> bool | None:
    # An earlier branch's test was unknown: this branch runs only if it did not.
    return False if taken is False else None


class _Reader:
    def __init__(self, image_type: str, platform: str, build_args: Mapping[str, str]) -> None:
        self.variables: dict[str, str] = {}
        self.build_args = dict(build_args, IMAGE_TYPE=image_type)
        self.machine = _MACHINE.get(platform, platform)
        self.platform = platform
        self.branches = _Branches()
        self.extras: list[str] = []
        self.groups: list[str] = []
        self.notes: list[str] = []
        self.found = False

    def _evaluate(self, condition: str) -> bool | None:
        test = _TEST.match(condition.strip())
        if test is None:
            return None
        left, operator, right = test.group(2), test.group(3), test.group(5)
        for word in _MACHINE_WORDS:
            left, right = left.replace(word, self.machine), right.replace(word, self.machine)
        if "$(" in left or "$(" in right:
            return None
        left, unknown_left = _expand(left, self.variables)
        right, unknown_right = _expand(right, self.variables)
        if unknown_left or unknown_right:
            return None
        return (left == right) != (operator == "!=")

    def line(self, line: str) -> None:
        declared = _ARG.match(line)
        if declared:
            name, default = declared.group(1), declared.group(2)
            if name in self.build_args:
                self.variables[name] = self.build_args[name]
            elif default is not None:
                self.variables[name] = _expand(default.strip("\"'"), self.variables)[0]
            if name == "TARGETARCH":
                self.variables[name] = self.platform
            return
        line = _RUN_PREFIX.sub("", line)
        for statement in re.split(r"\s*(?:;|&&)\s*(?=\S)", line):
            self._statement(statement.strip())

    def _statement(self, statement: str) -> None:
        keyword, _, rest = statement.partition(" ")
        if keyword in ("then", "else") and rest:
            if keyword == "else":
                self.branches.otherwise()
            statement = rest.strip()
        elif keyword == "else":
            self.branches.otherwise()
            return
        elif keyword == "fi":
            self.branches.close()
            return
        opened = _IF.match(statement)
        if opened:
            self._open(opened.group(2), elif_=bool(opened.group(1)))
            return
        if _UV_SYNC.search(statement):
            if self.branches.active() is not False:
                self._sync(statement)
            return
        assigned = _ASSIGN.match(statement)
        if assigned and self.branches.active():
            self.variables[assigned.group(1)] = _unquote(assigned.group(2), self.variables)

    def _open(self, condition: str, *, elif_: bool) -> None:
        taken = self._evaluate(condition)
        if elif_:
            decided = self.branches.alternative(taken)
        else:
            self.branches.open(taken)
            decided = False
        if taken is None and not decided:
            self.notes.append(f"condition not evaluated, its selection not taken: {condition}")

    def _sync(self, statement: str) -> None:
        expanded, unknown = _expand(statement, self.variables)
        for name in unknown:
            self.notes.append(f"`${name}` in the Dockerfile's uv sync line has no known value")
        try:
            words = shlex.split(expanded[_UV_SYNC.search(expanded).start() :])  # type: ignore[union-attr]
        except ValueError:
            self.notes.append(f"uv sync line not read: {statement}")
            return
        if "--only-group" in words or any(w.startswith("--only-group=") for w in words):
            return
        self.found = True
        for flag, value in _options(words):
            target = self.extras if flag == "--extra" else self.groups
            if flag in ("--extra", "--group") and value not in target:
                target.append(value)


def _unquote(value: str, variables: Mapping[str, str]) -> str:
    try:
        words = shlex.split(value)
    except ValueError:
        words = [value]
    return _expand(" ".join(words), variables)[0]


def _options(words: list[str]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for index, word in enumerate(words):
        if "=" in word and word.startswith("--"):
            flag, _, value = word.partition("=")
            pairs.append((flag, value))
        elif word.startswith("--") and index + 1 < len(words):
            pairs.append((word, words[index + 1]))
    return pairs


def read_selection(
    text: str,
    *,
    image_type: str,
    platform: str = "amd64",
    build_args: Mapping[str, str] | None = None,
) -> SyncSelection:
    """The extras and groups the Dockerfile syncs for a lane (IMAGE_TYPE) and platform."""
    reader = _Reader(image_type, platform, build_args or {})
    for instruction in read(text).instructions:
        if instruction.keyword == "FROM":
            reader.branches.clear()
        # The script is the heredoc's body: the instruction's own text ends where it opens.
        reader.line(
            instruction.text.split("<<", 1)[0] if instruction.heredocs else instruction.text
        )
        for heredoc in instruction.heredocs:
            for line in _shell_lines(heredoc.body):
                reader.line(line)
            reader.branches.clear()
    return SyncSelection(
        tuple(reader.extras), tuple(reader.groups), tuple(reader.notes), reader.found
    )
