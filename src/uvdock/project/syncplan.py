"""What `uvdock sync` installs: the lane Dockerfile's selection plus the profile's, checked
against what the project really declares (on Megatron-LM `dev` is an extra), `--inexact`
unless asked (keeps what `uv pip` added), never reinstalling what the base image provides.
The Dockerfile's `uv sync` selection, which `uvdock sync` must not shrink, is rebuilt from
ARG, ENV, shell variables and `if` tests on IMAGE_TYPE or the architecture; a test it cannot
evaluate is noted, not taken."""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from uvdock.errors import InputRefused
from uvdock.files import textlines
from uvdock.image.dockerfile import declarations, expand, quoted, read
from uvdock.project import pyproject
from uvdock.project.names import normalize_name

if TYPE_CHECKING:
    from uvdock.config.settings import Config
    from uvdock.project.pyproject import ProjectDeps

PROFILES: dict[str, tuple[str, ...]] = {"dev": ("dev", "test"), "lint": (), "lts": ("test",)}
_REMOVAL = re.compile(r"^\s*- ([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?==\S+)", re.M)
_NO_INSTALL = re.compile(r"--no-install-package[= ]+([A-Za-z0-9][A-Za-z0-9._-]*)")
_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*?)\s*$")
_IF = re.compile(r"^\s*(el)?if\s+\[\s+(.+?)\s+\]\s*;?\s*(?:then)?\s*$")
_TEST = re.compile(r'^("?)(.+?)\1\s+(!?=|==)\s+("?)(.*?)\4$')
_UV_SYNC = re.compile(r"(?:^|\s)uv\s+sync(?:\s|$)")
_MACHINE_WORDS = re.compile(r"\$\(uname -m\)|\$\(arch\)|`uname -m`")
_MACHINE = {"amd64": "x86_64", "arm64": "aarch64"}
UNKNOWN = 0.5  # a test not evaluated


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
    def __init__(self, image_type: str, platform: str) -> None:
        self.variables: dict[str, str] = {}
        # The build arguments known: the lane's, and TARGETARCH as BuildKit sets it.
        self.build_args = {"IMAGE_TYPE": image_type, "TARGETARCH": platform}
        self.machine = _MACHINE.get(platform, platform)
        # Per open `if`: does the current branch run, did an earlier one? In Kleene's logic
        # (1 true, 0 false, UNKNOWN), where AND is min, OR is max and NOT x is 1 - x.
        self.blocks: list[tuple[float, float]] = []
        self.extras: list[str] = []
        self.groups: list[str] = []
        self.notes: list[str] = []
        self.found = False

    def _evaluate(self, condition: str) -> float:
        test = _TEST.match(condition.strip())
        if test is None:
            return UNKNOWN
        sides: list[str] = []
        for side in (test[2], test[5]):
            side = _MACHINE_WORDS.sub(self.machine, side)
            value, unknown = expand(side, self.variables)
            if "$(" in side or unknown:
                return UNKNOWN
            sides.append(value)
        return float((sides[0] == sides[1]) != (test[3] == "!="))

    def _active(self) -> float:
        return min((current for current, _ in self.blocks), default=1)

    def line(self, line: str) -> None:
        for statement in map(str.strip, re.split(r"\s*(?:;|&&)\s*(?=\S)", line)):
            keyword, _, rest = statement.partition(" ")
            if keyword == "fi":
                self.blocks = self.blocks[:-1]
                continue
            if keyword == "else":
                self._open(None, elif_=True)
            if keyword in ("then", "else"):
                if not rest:
                    continue
                statement = rest.strip()
            if opened := _IF.match(statement):
                self._open(opened.group(2), elif_=bool(opened.group(1)))
            elif _UV_SYNC.search(statement):
                if self._active():
                    self._sync(statement)
            elif (assigned := _ASSIGN.match(statement)) and self._active() == 1:
                try:
                    words = shlex.split(assigned[2])
                except ValueError:
                    words = [assigned[2]]
                self.variables[assigned[1]] = expand(" ".join(words), self.variables)[0]

    def _open(self, condition: str | None, *, elif_: bool) -> None:
        """An `if` or `elif` test (None: an `else`, an `elif` that always holds)."""
        taken = 1.0 if condition is None else self._evaluate(condition)
        decided = False
        if not elif_:
            self.blocks.append((taken, taken))
        elif self.blocks:  # an `elif`: it does not matter when an earlier branch ran
            done = self.blocks[-1][1]
            decided = done == 1
            self.blocks[-1] = (min(1 - done, taken), max(done, taken))
        if taken == UNKNOWN and not decided:
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


def read_selection(text: str, *, image_type: str, platform: str = "amd64") -> SyncSelection:
    reader = _Reader(image_type, platform)
    dockerfile = read(text)
    for instruction in dockerfile.instructions:
        if instruction.keyword == "FROM":
            reader.blocks.clear()
        elif instruction.keyword in ("ARG", "ENV"):
            # A build argument wins, then the default as written.
            for name, raw, _, _ in declarations(instruction, dockerfile.escape):
                if name in reader.build_args:
                    reader.variables[name] = reader.build_args[name]
                elif raw is not None:
                    raw = raw[1:-1] if quoted(raw) else raw
                    reader.variables[name] = expand(raw, reader.variables)[0]
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


class SyncPlan(NamedTuple):
    uv_args: list[str]
    notes: list[str]


def environment_plan(
    repo: Path,
    project: Path,
    config: Config,
    warn: Callable[[str], None],
    profile: str = "dev",
    *,
    groups: Sequence[str] = (),
    extras: Sequence[str] = (),
    exact: bool = False,
    created: bool = False,
) -> SyncPlan:
    """`created`: the step before (`uv add`, not run in a dry run) creates `groups` and
    `extras`, so they count as declared."""
    deps = pyproject.read(project)
    if created:  # target_args has refused one declared as the other kind
        deps = deps._replace(extras=(*deps.extras, *extras), groups=(*deps.groups, *groups))
    dockerfile = repo / _lane_dockerfile(repo, config, profile)
    protected = protected_packages(dockerfile, config.protected_packages)
    image = None
    if profile != "lint":  # what the lane's Dockerfile syncs into the image, on this machine
        import platform

        machine, shown = platform.machine().lower(), dockerfile.relative_to(repo)
        try:
            image = read_selection(
                textlines.read_text(dockerfile, newlines=True),
                image_type="lts" if profile == "lts" else "dev",
                platform={m: p for p, m in _MACHINE.items()}.get(machine, machine),
            )
        except OSError:
            warn(f"{shown} not readable: the image's own selection is not known")
        if image is not None and not image.found:
            warn(f"no `uv sync` line in {shown}: the profile's own selection only")
            image = None
    return build(
        profile, deps, groups=groups, extras=extras, protected=protected, image=image, exact=exact
    )


def _lane_dockerfile(repo: Path, config: Config, profile: str) -> str:
    if profile != "lts":
        return config.dockerfile
    # Megatron-LM early 2026 had no LTS Dockerfile: its LTS rows built the dev one with
    # IMAGE_TYPE=lts, so that file (when it reads IMAGE_TYPE) holds the LTS selection.
    if not textlines.regular_file(repo / config.lts_dockerfile):
        with contextlib.suppress(OSError):
            if "IMAGE_TYPE" in textlines.read_text(repo / config.dockerfile, newlines=True):
                return config.dockerfile
    return config.lts_dockerfile


def build(
    profile: str,
    deps: ProjectDeps,
    *,
    groups: Sequence[str] = (),
    extras: Sequence[str] = (),
    protected: Sequence[str] = (),
    image: SyncSelection | None = None,
    exact: bool = False,
) -> SyncPlan:
    """A profile's name the project lacks is left out with a note; one asked for must exist.
    The profile is one of PROFILES (the command line's choices)."""
    mode = "--exact" if exact else "--inexact"
    if profile == "lint":
        if groups or extras:
            raise InputRefused(
                "--profile lint installs only the linting group; drop --group/--extra"
            )
        if "linting" not in map(normalize_name, deps.groups):
            raise InputRefused(
                "--profile lint installs the `linting` dependency group, which pyproject.toml "
                "does not declare; nothing was synced",
                hint="sync this project's own group instead: `uvdock sync --group NAME`",
            )
        return SyncPlan(["sync", "--locked", mode, "--only-group", "linting"], [])
    notes = list(image.notes) if image else []
    wanted: list[tuple[str, str]] = []
    own = {kind: set(map(normalize_name, names)) for kind, names in deps._asdict().items()}
    # The Dockerfile's own extras and groups the project declares.
    for kind, names in (("extra", image.extras), ("group", image.groups)) if image else ():
        for name in names:
            if normalize_name(name) in own[f"{kind}s"]:
                wanted.append((name, kind))
            else:
                notes.append(
                    f"the Dockerfile syncs --{kind} {name}, which pyproject.toml does not "
                    "declare: left out"
                )
    for name in PROFILES[profile]:
        if normalize_name(name) in own["extras"] | own["groups"]:
            wanted.append((name, ""))
        else:
            notes.append(f"this project declares no `{name}` extra or group: left out of the sync")
    wanted += [(name, "group") for name in groups] + [(name, "extra") for name in extras]
    if profile == "lts" and "lts" in {e.lower() for e in deps.extras}:
        wanted.insert(0, ("lts", "extra"))
    chosen: dict[tuple[str, str], None] = {}
    for name, asked in wanted:
        kind = deps.classify(name)
        if asked and asked != kind:
            notes.append(
                f"`{name}` is an {kind} in pyproject.toml: using --{kind} {name}, not --{asked}"
            )
        chosen[(f"--{kind}", name)] = None
    args = ["sync", "--locked", mode, *(word for pair in chosen for word in pair)]
    return SyncPlan(args + [w for p in protected for w in ("--no-install-package", p)], notes)


def removals(uv_output: str) -> list[str]:
    """The `- name==version` lines of `uv sync --dry-run` output: what uv would uninstall."""
    return _REMOVAL.findall(uv_output)


def protected_packages(dockerfile: Path, fallback: tuple[str, ...]) -> tuple[str, ...]:
    """The Dockerfile's `--no-install-package` list: what the base image already provides."""
    try:
        text = textlines.read_text(dockerfile, newlines=True)
    except OSError:
        return fallback
    return tuple(dict.fromkeys(_NO_INSTALL.findall(text))) or fallback
