"""Lanes found by meaning: the external base of each target a repository builds.

Every Dockerfile of the repository (`Dockerfile`, `Dockerfile.*`, `*.Dockerfile`) is read
as Docker reads it (image/dockerfile.py). The targets its CI builds (image/ci_builds.py;
the last stage when no CI build names the file) lead through stage aliases to an external
base: a `FROM ${ARG}` whose value is a global ARG's default or a build argument, or an
image written in the FROM line itself. Each such base is a lane, named `FILE:ARG` (or
`FILE:FROM` for an image written in FROM), and its references are managed together: the
ARG default and every CI build argument that overrides it, including the YAML keys a `$VAR`
value comes from. A base uvdock cannot order (not an NVIDIA image, a tag in no known
scheme, no value) is listed with why, never dropped; a build argument the Dockerfile does
not declare is a finding naming both places.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from uvdock.image import dockerfile as df
from uvdock.image.ci_builds import Build, ci_builds, scripts_run
from uvdock.image.pin_file import pin_file_pin
from uvdock.image.pins import UNSUPPORTED_SHAPE, Finding, LaneRules, Pin
from uvdock.registry.tags import parse_image

UNDECLARED = "undeclared-build-arg"
UNKNOWN_TARGET = "unknown-target"
_SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", "venv"}
# Build arguments every Dockerfile accepts without declaring them.
_PREDEFINED = {
    *(f"{n}_PROXY" for n in ("HTTP", "HTTPS", "FTP", "NO", "ALL")),
    *(f"{n.lower()}_proxy" for n in ("HTTP", "HTTPS", "FTP", "NO", "ALL")),
    "SOURCE_DATE_EPOCH",
    *(
        f"{side}{part}"
        for side in ("BUILD", "TARGET")
        for part in ("PLATFORM", "OS", "ARCH", "VARIANT")
    ),
}


class Found(NamedTuple):
    lanes: list[LaneRules]
    pins: list[Pin]
    findings: list[Finding]
    unrecognised: list[Pin]  # bases no lane can manage, each with why (`note`)
    texts: dict[str, str]
    builds: list[Build]  # the CI builds of the repository's Dockerfiles


def is_dockerfile(name: str) -> bool:
    lower = name.lower()
    return lower == "dockerfile" or lower.startswith("dockerfile.") or lower.endswith(".dockerfile")


def _is_ci_yaml(path: str) -> bool:
    if not path.endswith((".yml", ".yaml")):
        return False
    return path.startswith((".github/workflows/", ".gitlab/")) or path.startswith(".gitlab-ci.")


def repository_files(repo: Path) -> tuple[list[str], list[str]]:
    """The repository's Dockerfiles and CI YAML files, as relative POSIX paths.

    `image check` runs this on every call: one scandir per folder, and per file a substring
    test in C before any Python-level work (a Megatron-LM-sized tree: a few milliseconds).
    """
    dockerfiles: list[str] = []
    ci: list[str] = []
    pending = [("", str(repo))]
    while pending:
        rel, folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                listed = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
        except OSError:
            continue
        ci_folder = rel == "" or rel.startswith((".github/workflows/", ".gitlab/"))
        for name, is_dir in listed:
            if is_dir:
                if name not in _SKIP_DIRS and (name[0] != "." or name in (".github", ".gitlab")):
                    pending.append((rel + name + "/", f"{folder}/{name}"))
            elif "ockerfile" in name or "OCKERFILE" in name:
                if is_dockerfile(name):
                    dockerfiles.append(rel + name)
            elif ci_folder and _is_ci_yaml(rel + name):
                ci.append(rel + name)
    return sorted(dockerfiles), sorted(ci)


def _read(repo: Path, path: str, texts: dict[str, str]) -> str | None:
    if path not in texts:
        from uvdock.files.textlines import read_text

        target = repo / path
        if not target.is_file():
            return None
        try:
            texts[path] = read_text(target)
        except (OSError, UnicodeDecodeError):
            return None
    return texts[path]


def _all_builds(repo: Path, ci_files: Sequence[str], texts: dict[str, str]) -> list[Build]:
    builds: list[Build] = []
    scripts: set[str] = set()
    for path in ci_files:
        text = _read(repo, path, texts)
        if text is not None:
            builds += ci_builds(path, text)
            scripts.update(scripts_run(text))
    for path in sorted(scripts):
        text = _read(repo, path, texts)
        if text is not None and path not in ci_files:
            builds += ci_builds(path, text)
    return builds


def _source(path: str) -> str:
    return "workflow" if path.endswith((".yml", ".yaml")) else "script"


def _reference(path: str, line: int, lane: str, value: str, start: int, source: str) -> Pin:
    """A managed reference of a found lane: its tag when uvdock can order the image."""
    image = parse_image(value)[0]
    tag = image.tag if image else value
    return Pin(path, line, lane, tag, True, source, value, start, start + len(value))


class _Dockerfile(NamedTuple):
    path: str
    text: str
    parsed: df.Dockerfile
    stages: list[df.Stage]
    declared: dict[str, int]  # every ARG name -> its first line


def _declared(parsed: df.Dockerfile) -> dict[str, int]:
    found: dict[str, int] = {}
    for instruction in parsed.instructions:
        if instruction.keyword == "ARG":
            for name, _, _ in df.declarations(instruction, parsed.escape):
                found.setdefault(name, instruction.line)
    return found


def _which(builds_path: str, dockerfiles: dict[str, _Dockerfile]) -> _Dockerfile | None:
    if builds_path in dockerfiles:
        return dockerfiles[builds_path]
    ending = [d for p, d in dockerfiles.items() if p.endswith("/" + builds_path)]
    return ending[0] if len(ending) == 1 else None


def _lane_key(stage: df.Stage) -> str | None:
    """The ARG a FROM reads whole (`$X`, `${X}`, `${X:-fallback}`), "" for a literal image,
    None otherwise (the image built from parts)."""
    if not stage.variables:
        return ""
    whole = re.fullmatch(r"\$(?:(?P<bare>\w+)|\{(?P<braced>\w+)(?::-[^$}]*)?\})", stage.written)
    return None if whole is None else whole["bare"] or whole["braced"]


class _Discovery:
    def __init__(self, repo: Path, covered: set[tuple[str, str]], texts: dict[str, str]) -> None:
        self.repo = repo
        self.covered = covered
        self.found = Found([], [], [], [], dict(texts), [])

    def run(self) -> Found:
        texts = self.found.texts
        paths, ci_files = repository_files(self.repo)
        dockerfiles: dict[str, _Dockerfile] = {}
        for path in paths:
            text = _read(self.repo, path, texts)
            if text is not None:
                parsed = df.read(text)
                dockerfiles[path] = _Dockerfile(
                    path, text, parsed, df.stages(parsed), _declared(parsed)
                )
        builds = _all_builds(self.repo, ci_files, texts)
        built: dict[str, list[Build]] = {path: [] for path in dockerfiles}
        for build in builds:
            target = _which(build.dockerfile, dockerfiles)
            if target is not None:
                built[target.path].append(build._replace(dockerfile=target.path))
                self.found.builds.append(built[target.path][-1])
        for path, item in dockerfiles.items():
            self._dockerfile(item, built[path])
        return self.found

    def _dockerfile(self, item: _Dockerfile, builds: list[Build]) -> None:
        """One lane per external base the built targets reach (the last stage when no CI
        build names this Dockerfile)."""
        targets: dict[str | None, list[Build]] = {}
        for build in builds:
            targets.setdefault(build.target, []).append(build)
        bases: dict[int, tuple[df.Stage, list[Build]]] = {}
        for target, of_target in (targets or {None: []}).items():
            stage = df.base_of(item.stages, target)
            if stage is None:
                self._unknown_target(item, target, of_target)
                continue
            for build in of_target:
                self._undeclared(item, stage, build)
            bases.setdefault(stage.line, (stage, []))[1].extend(of_target)
        for stage, of_base in bases.values():
            self._lane(item, stage, of_base)
        built = ", ".join(sorted(t or "the last stage" for t in targets or {None: []}))
        managed = {_lane_key(stage) for stage, _ in bases.values()} - {None, ""}
        for stage in item.stages:
            key = _lane_key(stage)
            if key and (key in managed or (item.path, key) in self.covered):
                continue  # the same ARG as a lane's base: that lane manages it
            if stage.parent is None and stage.line not in bases:
                why = f"not the base of a built target ({built})"
                self._unrecognised(item.path, stage.line, stage.written, why)

    def _unknown_target(self, item: _Dockerfile, target: str | None, builds: list[Build]) -> None:
        for build in builds:
            self.found.findings.append(
                Finding(
                    UNKNOWN_TARGET,
                    "",
                    build.path,
                    build.line,
                    f"builds target {target or '(last stage)'} of {item.path}, which has no"
                    " such stage",
                )
            )

    def _undeclared(self, item: _Dockerfile, stage: df.Stage, build: Build) -> None:
        reads = _lane_key(stage)
        for arg in build.args:
            if arg.name in item.declared or arg.name in _PREDEFINED:
                continue
            if arg.name.startswith("BUILDKIT_"):
                continue
            instead = f"; its base is ARG {reads}" if reads else ""
            lane = "" if reads is None else f"{item.path}:{reads or 'FROM'}"
            self.found.findings.append(
                Finding(
                    UNDECLARED,
                    lane,
                    arg.path or build.path,
                    arg.line,
                    f"build argument {arg.name} is passed to {item.path}, which declares no"
                    f" ARG {arg.name} ({item.path}:{stage.line} builds FROM {stage.written}"
                    f"{instead}): the value is ignored; remove it or pass the ARG the"
                    " Dockerfile reads",
                    tag=arg.value,
                )
            )

    def _lane(self, item: _Dockerfile, stage: df.Stage, builds: list[Build]) -> None:
        key = _lane_key(stage)
        name = f"{item.path}:{key or 'FROM'}"
        if key is None:
            self._unrecognised(item.path, stage.line, stage.written, "FROM builds the image"
                               " from several parts; uvdock manages a whole reference")  # fmt: skip
            return
        if (item.path, key or "FROM") in self.covered:
            return
        pins, problems = self._references(item, stage, key, name, builds)
        values = [pin.value for pin in pins]
        if not any(parse_image(value)[0] for value in values):
            why = parse_image(values[0] if values else stage.image)[1] or (
                f"ARG {key} has no default and no CI build passes it"
            )
            self._unrecognised(item.path, stage.line, values[0] if values else stage.written, why)
            return
        self.found.lanes.append(LaneRules(name, "", item.path, (), (), arg=key or "FROM"))
        self.found.pins.extend(pins)
        self.found.findings.extend(problems)

    def _references(
        self, item: _Dockerfile, stage: df.Stage, key: str, name: str, builds: list[Build]
    ) -> tuple[list[Pin], list[Finding]]:
        """The lane's managed references: the global default (or the FROM image), then the
        build arguments that override it."""
        pins: list[Pin] = []
        problems: list[Finding] = []
        if not key:
            pins.append(self._from_pin(item, stage, name))
        else:
            first_from = item.stages[0].line if item.stages else 0
            defaults, shapes = df.arg_defaults(item.text, key)
            for default in defaults:
                if default.line < first_from:
                    pins.append(_reference(item.path, default.line, name, default.value,
                                           default.start, "dockerfile"))  # fmt: skip
            problems += [
                Finding(UNSUPPORTED_SHAPE, name, item.path, p.line, p.message)
                for p in shapes
                if p.line < first_from
            ]
        for build in builds:
            for arg in build.args:
                if arg.name == key and arg.pin_file:
                    text = _read(self.repo, arg.pin_file, self.found.texts)
                    read = pin_file_pin(arg.pin_file, text, name) if text is not None else None
                    if isinstance(read, Pin):
                        pins.append(read)
                    elif read is not None:
                        problems.append(read)
                elif arg.name == key and "$" not in arg.value:
                    path = arg.path or build.path
                    pins.append(
                        _reference(path, arg.line, name, arg.value, arg.start, _source(path))
                    )
        # One place read by several builds (a pin file, a workflow `env:` key) is one pin.
        return list({(p.path, p.start): p for p in pins}.values()), problems

    def _from_pin(self, item: _Dockerfile, stage: df.Stage, name: str) -> Pin:
        instruction = next(i for i in item.parsed.instructions if i.line == stage.line)
        index = instruction.text.find(stage.written, len(instruction.text) -
                                      len(instruction.text.lstrip()) + 4)  # fmt: skip
        start = instruction.offsets[index]
        return _reference(item.path, stage.line, name, stage.written, start, "dockerfile")

    def _unrecognised(self, path: str, line: int, value: str, why: str) -> None:
        self.found.unrecognised.append(
            Pin(path, line, None, value, False, "unrecognised", value, note=why)
        )


def discover(
    repo: Path, covered: set[tuple[str, str]], texts: dict[str, str] | None = None
) -> Found:
    """The lanes of every Dockerfile, except (Dockerfile, ARG) pairs a configured lane covers.
    `texts`: files already read (path -> text), not read again."""
    return _Discovery(repo, covered, texts or {}).run()
