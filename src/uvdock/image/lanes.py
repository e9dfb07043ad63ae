"""Lanes found by meaning: the external base each target CI builds (no build: the last stage)
reaches through stage aliases, `FROM ${ARG}` (lane `FILE:ARG`: its default and the CI build
arguments overriding it) or an image (`FILE:FROM`). A base uvdock cannot order is listed."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from uvdock.errors import InputRefused
from uvdock.files.textlines import read_text
from uvdock.image import dockerfile as df
from uvdock.image.ci_builds import Build, ci_builds, scripts_run
from uvdock.image.pins import UNSUPPORTED_SHAPE, Finding, LaneRules, Pin, Scan, pin_file_pin
from uvdock.registry.tags import parse_image

UNDECLARED = "undeclared-build-arg"
_SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", "venv"}
_CI_DIRS = (".github", ".gitlab")
_YAML = (".yml", ".yaml")
# Build arguments every Dockerfile accepts without declaring them.
_PREDEFINED = {
    "SOURCE_DATE_EPOCH",
    *(f"{n}_PROXY" for n in ("HTTP", "HTTPS", "FTP", "NO", "ALL")),
    *(f"{n}_proxy" for n in ("http", "https", "ftp", "no", "all")),
    *(f"{s}{p}" for s in ("BUILD", "TARGET") for p in ("PLATFORM", "OS", "ARCH", "VARIANT")),
}


def read_file(repo: Path, path: str, texts: dict[str, str], strict: bool = True) -> str | None:
    """The file's text, kept in `texts`; unreadable: refused when `strict`, else skipped."""
    if path not in texts:
        if not strict and not (repo / path).is_file():
            return None
        try:
            texts[path] = read_text(repo / path)
        except (OSError, UnicodeDecodeError) as exc:
            if strict and not isinstance(exc, FileNotFoundError):
                raise InputRefused(f"{path}: cannot be read as UTF-8 text: {exc}") from exc
            return None
    return texts[path]


def repository_files(repo: Path) -> tuple[list[str], list[str]]:
    """The repository's Dockerfiles and CI YAML files, as relative POSIX paths."""
    dockerfiles: list[str] = []
    ci: list[str] = []
    top = len(os.path.join(repo, ""))  # "/" already ends in a separator
    for folder, dirs, files in os.walk(repo):
        rel = f"{folder[top:].replace(os.sep, '/')}/".lstrip("/")
        dirs[:] = [d for d in dirs if (d not in _SKIP_DIRS and d[0] != ".") or d in _CI_DIRS]
        ci_folder = rel == "" or rel.startswith((".github/workflows/", ".gitlab/"))
        for name in files:
            lower = name.lower()
            if "ockerfile" in name or "OCKERFILE" in name:
                # Dockerfile, Dockerfile.ci, ci.dockerfile (any case)
                if "dockerfile" in (lower.partition(".")[0], lower.rpartition(".")[2]):
                    dockerfiles.append(rel + name)
            elif ci_folder and name.endswith(_YAML) and (rel or name.startswith(".gitlab-ci.")):
                ci.append(rel + name)
    return sorted(dockerfiles), sorted(ci)


def _reference(path: str, line: int, lane: str, value: str, start: int, source: str) -> Pin:
    image = parse_image(value)[0]
    tag = image.tag if image else value
    return Pin(path, line, lane, tag, True, source, value, start, start + len(value))


class _Dockerfile(NamedTuple):
    path: str
    stages: list[df.Stage]
    declared: set[str]  # every ARG name


def _lane_key(stage: df.Stage) -> str | None:
    """The ARG a FROM reads whole (`${X:-fallback}` too), "" for an image, None for parts."""
    if not stage.variables:
        return ""
    whole = re.fullmatch(r"\$(?:(?P<bare>\w+)|\{(?P<braced>\w+)(?::-[^$}]*)?\})", stage.written)
    return None if whole is None else whole["bare"] or whole["braced"]


class _Discovery:
    def __init__(self, repo: Path, covered: set[tuple[str, str]], found: Scan) -> None:
        self.repo, self.covered, self.texts, self.found = repo, covered, found.texts, found

    def read(self, path: str) -> str | None:
        return read_file(self.repo, path, self.texts, strict=False)

    def run(self) -> Scan:
        paths, ci_files = repository_files(self.repo)
        dockerfiles: dict[str, _Dockerfile] = {}
        for path in paths:
            if (text := self.read(path)) is not None:
                parsed = df.read(text)
                declared = set(df.global_args(parsed, anywhere=True))
                dockerfiles[path] = _Dockerfile(path, df.stages(parsed), declared)
        texts = {path: text for path in ci_files if (text := self.read(path)) is not None}
        # The shell scripts the CI files run build too.
        scripts = {s for text in texts.values() for s in scripts_run(text)} - set(ci_files)
        texts.update((path, text) for path in sorted(scripts) if (text := self.read(path)))
        builds = [build for path, text in texts.items() for build in ci_builds(path, text)]
        for build in builds:
            # A path relative to another folder than the root: the one Dockerfile it ends.
            exact = [build.dockerfile] if build.dockerfile in dockerfiles else []
            matches = exact or [p for p in dockerfiles if p.endswith("/" + build.dockerfile)]
            if len(matches) == 1:
                self.found.builds.append(build._replace(dockerfile=matches[0]))
        for path, item in dockerfiles.items():
            self._dockerfile(item, [b for b in self.found.builds if b.dockerfile == path])
        return self.found

    def _dockerfile(self, item: _Dockerfile, builds: list[Build]) -> None:
        """One lane per external base the built targets reach (no build: the last stage)."""
        targets: dict[str | None, list[Build]] = {} if builds else {None: []}
        for build in builds:
            targets.setdefault(build.target, []).append(build)
        bases: dict[int, tuple[df.Stage, list[Build]]] = {}
        for target, of_target in targets.items():
            if (stage := df.base_of(item.stages, target)) is None:
                message = f"builds target {target or '(last stage)'} of {item.path}, which has"
                message += " no such stage"
                self.found.findings.extend(
                    Finding("unknown-target", "", b.path, b.line, message) for b in of_target
                )
                continue
            for build in of_target:
                self._undeclared(item, stage, build)
            bases.setdefault(stage.line, (stage, []))[1].extend(of_target)
        for stage, of_base in bases.values():
            self._lane(item, stage, of_base)
        built = ", ".join(sorted(t or "the last stage" for t in targets))
        managed = {_lane_key(stage) for stage, _ in bases.values()} - {None, ""}
        for stage in item.stages:
            key = _lane_key(stage)
            if key and (key in managed or (item.path, key) in self.covered):
                continue  # the same ARG as a lane's base: that lane manages it
            if stage.parent is None and stage.line not in bases:
                why = f"not the base of a built target ({built})"
                self._unrecognised(item.path, stage.line, stage.written, why)

    def _undeclared(self, item: _Dockerfile, stage: df.Stage, build: Build) -> None:
        reads = _lane_key(stage)
        for arg in build.args:
            name = arg.name
            if name in item.declared or name in _PREDEFINED or name.startswith("BUILDKIT_"):
                continue
            instead = f"; its base is ARG {reads}" if reads else ""
            lane = "" if reads is None else f"{item.path}:{reads or 'FROM'}"
            message = (
                f"build argument {name} is passed to {item.path}, which declares no ARG {name}"
                f" ({item.path}:{stage.line} builds FROM {stage.written}{instead}): the value"
                " is ignored; remove it or pass the ARG the Dockerfile reads"
            )
            where = arg.path or build.path
            finding = Finding(UNDECLARED, lane, where, arg.line, message, arg.value)
            self.found.findings.append(finding)

    def _lane(self, item: _Dockerfile, stage: df.Stage, builds: list[Build]) -> None:
        if (key := _lane_key(stage)) is None:
            why = "FROM builds the image from several parts; uvdock manages a whole reference"
            self._unrecognised(item.path, stage.line, stage.written, why)
            return
        if (item.path, key or "FROM") in self.covered:
            return
        name = f"{item.path}:{key or 'FROM'}"
        pins, problems = self._references(item, stage, key, name, builds)
        if not any(parse_image(pin.value)[0] for pin in pins):
            why = parse_image(pins[0].value if pins else stage.image)[1]
            why = why or f"ARG {key} has no default and no CI build passes it"
            self._unrecognised(item.path, stage.line, pins[0].value if pins else stage.written, why)
            return
        self.found.lanes.append(LaneRules(name, "", item.path, (), (), arg=key or "FROM"))
        self.found.pins.extend(pins)
        self.found.findings.extend(problems)

    def _references(
        self, item: _Dockerfile, stage: df.Stage, key: str, name: str, builds: list[Build]
    ) -> tuple[list[Pin], list[Finding]]:
        """The global default (or FROM image), the build arguments overriding it; problems."""
        found: list[Pin | Finding] = []
        if not key:
            found.append(
                _reference(item.path, stage.line, name, stage.written, stage.start, "dockerfile")
            )
        else:  # the global defaults: before the first FROM
            defaults, shapes = df.arg_defaults(self.texts[item.path], key)
            first = item.stages[0].line
            found += [
                _reference(item.path, d.line, name, d.value, d.start, "dockerfile")
                for d in defaults
                if d.line < first
            ]
            found += [
                Finding(UNSUPPORTED_SHAPE, name, item.path, *p) for p in shapes if p.line < first
            ]
        for build in builds:
            for arg in (arg for arg in build.args if arg.name == key):
                content = self.read(arg.pin_file) if arg.pin_file else None
                if content is not None:
                    found.append(pin_file_pin(arg.pin_file, content, name))
                elif not arg.pin_file and "$" not in arg.value:
                    path = arg.path or build.path
                    source = "workflow" if path.endswith((".yml", ".yaml")) else "script"
                    found.append(_reference(path, arg.line, name, arg.value, arg.start, source))
        # One place read by several builds (a pin file, a workflow `env:` key) is one pin.
        pins = {(p.path, p.start): p for p in found if isinstance(p, Pin)}
        return list(pins.values()), [f for f in found if isinstance(f, Finding)]

    def _unrecognised(self, path: str, line: int, value: str, why: str) -> None:
        self.found.unclassified.append(
            Pin(path, line, None, value, False, "unrecognised", value, note=why)
        )


def discover(repo: Path, covered: set[tuple[str, str]], scan: Scan | None = None) -> Scan:
    """The lanes of every Dockerfile but the (Dockerfile, ARG) pairs `covered`, into `scan`."""
    return _Discovery(repo, covered, scan or Scan([], [], [], {}, [], [])).run()
