"""The image builds a repository's CI runs (Dockerfile, target, build args): build commands
and build-push-action steps; a `$VAR` value is traced to the file's `VAR: value` keys."""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple

from uvdock.formats.yaml import by_key, compose, is_scalar, mappings
from uvdock.image.dockerfile import line_of, quoted, words

_BUILDER = re.compile(
    r"(?<![\w-])(?:docker(?:[ \t]+buildx)?[ \t]+build|podman[ \t]+build|buildah[ \t]+(?:bud|build))"
    r"(?=[ \t\\]|$)",
    re.M,
)
# Options of `docker build` that take a value as the next word.
_VALUED = {
    "-f", "--file", "-t", "--tag", "--target", "--build-arg", "--platform", "--label",
    "--cache-from", "--cache-to", "--secret", "--ssh", "--network", "-o", "--output",
    "--progress", "--iidfile", "--build-context", "--add-host", "--ulimit", "--shm-size",
    "-m", "--memory", "--builder", "--metadata-file", "--annotation", "--attest",
}  # fmt: skip
_VARIABLE = re.compile(
    r"\$\{?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}?"
    r"|\$\{\{\s*(?:env|vars)\.(?P<github>[A-Za-z_][A-Za-z0-9_]*)\s*\}\}"
)
# A value a build reads from a file: `$(cat docker/base_image)`, `$(< docker/base_image)`.
_FROM_FILE = re.compile(r"\$\((?:cat[ \t]+|<[ \t]*)(?P<path>[\w./-]+)[ \t]*\)")
_LINE = re.compile(r"[^\n]+")
_SCRIPT = re.compile(r"(?<![\w./-])(?:\./)?(?P<path>[\w./-]+\.sh)\b")


class BuildArg(NamedTuple):
    name: str
    value: str  # as written, quotes removed
    start: int  # span of the value in the file's text
    end: int
    line: int
    path: str = ""  # the file holding the value ("" for the build's own file)
    pin_file: str = ""  # the value is this file's content (`$(cat FILE)`)


class Build(NamedTuple):
    path: str  # the CI file
    line: int
    dockerfile: str  # normalised path relative to the repository root
    target: str | None
    args: tuple[BuildArg, ...]


def _command(text: str, begin: int, start: int, yaml: bool) -> str:
    """The shell command from `start` over its continued lines, breaks blanked (same offsets)."""
    prefix = text[text.rfind("\n", 0, begin) + 1 : begin]
    folded = yaml and prefix.strip()[-1:] in ("-", ":")
    indent = len(prefix) - len(prefix.lstrip(" "))
    end = text.find("\n", start)
    while end != -1:
        following = text[end + 1 : text.find("\n", end + 1) % (len(text) + 1)]
        more = len(following) - len(following.lstrip(" ")) > indent and following.strip()
        if not (text[start:end].rstrip(" \t\r").endswith("\\") or (folded and more)):
            break
        end = text.find("\n", end + 1)
    chunk = text[start:] if end == -1 else text[start:end]
    chunk = re.sub(r"\\[ \t]*\r?\n", lambda m: " " * len(m[0]), chunk)
    return chunk.replace("\r", " ").replace("\n", " ")


def _unquote(word: str, start: int) -> tuple[str, int]:
    return (word[1:-1], start + 1) if quoted(word) else (word, start)


def _build_arg(word: str, start: int, text: str) -> list[BuildArg]:
    """NAME=VALUE (either part or the whole quoted) at `start` in `text`; [] when no such."""
    word, start = _unquote(word, start)
    name, equals, value = word.partition("=")
    if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return []
    value, at = _unquote(value, start + len(name) + 1)
    return [BuildArg(name, value, at, at + len(value), line_of(text, at))]


def _options(command: str, base: int, text: str) -> tuple[dict[str, str], list[BuildArg], str]:
    # `$(cat FILE)` is one word to the shell: its blanks split nothing.
    masked = re.sub(r"\$\([^()]*\)", lambda m: re.sub(r"[ \t]", "\x01", m[0]), command)
    spans = words(masked, "\0")
    found: dict[str, str] = {}
    args: list[BuildArg] = []
    context = "."  # the last positional word
    for start, end, _ in spans:
        word = command[start:end]
        option, equals, inline = word.partition("=")
        if word in ("&&", "||", ";", "|", "&"):  # the shell command ends
            break
        if option.startswith("-") and not equals and option in _VALUED:
            if (value := next(spans, None)) is None:
                break
            start, end, _ = value
            inline, equals = command[start:end], "="
        elif option.startswith("-") and equals:
            start += len(option) + 1
        if option == "--build-arg" and equals:
            args += _build_arg(inline, base + start, text)
        elif option in ("-f", "--file", "--target") and equals:
            found[option.lstrip("-")[0]] = _unquote(inline, 0)[0]
        elif not word.startswith("-"):
            context = _unquote(word, 0)[0]
    return found, args, context


def _dockerfile(named: str | None, context: str) -> str:
    path = named if named else posixpath.join(context, "Dockerfile")
    return posixpath.normpath(path.replace("\\", "/")).lstrip("/")


def ci_builds(path: str, text: str) -> list[Build]:
    builds: list[Build] = []
    yaml = path.endswith((".yml", ".yaml"))
    for match in _BUILDER.finditer(text):
        if "#" in text[text.rfind("\n", 0, match.start()) + 1 : match.start()]:
            continue  # a comment, or an echo of the words: no build
        command = _command(text, match.start(), match.end(), yaml)
        found, args, context = _options(command, match.end(), text)
        if "$" in context and "f" not in found:
            continue  # the Dockerfile is named by a variable: no way to tell which
        line, dockerfile = line_of(text, match.start()), _dockerfile(found.get("f"), context)
        builds.append(Build(path, line, dockerfile, found.get("t"), tuple(args)))
    if yaml and ("build-args" in text or "target:" in text):
        builds += _action_builds(path, text)
    return [_resolved(build, text) for build in builds]


def _action_builds(path: str, text: str) -> list[Build]:
    """docker/build-push-action steps; text that is no YAML has none."""
    builds: list[Build] = []
    for document in compose(text) or []:
        for mapping in mappings(document):
            fields = by_key(mapping)
            keys = fields.keys()
            if not ({"build-args", "target"} & keys and {"file", "context"} & keys):
                continue
            values = {k: str(v.value) for k, v in fields.items() if is_scalar(v)}
            dockerfile = _dockerfile(values.get("file"), values.get("context", "."))
            args: list[BuildArg] = []
            if (node := fields.get("build-args")) is not None and is_scalar(node):
                for line in _LINE.finditer(text, node.start_mark.index, node.end_mark.index):
                    stripped = line[0].strip(" \t\r|>-")
                    args += _build_arg(stripped, line.start() + line[0].find(stripped), text)
            line = mapping.start_mark.line + 1
            builds.append(Build(path, line, dockerfile, values.get("target"), tuple(args)))
    return builds


def _resolved(build: Build, text: str) -> Build:
    """Each `$VAR` value replaced by the places the same file sets VAR (if any)."""
    args: list[BuildArg] = []
    for arg in build.args:
        if (from_file := _FROM_FILE.fullmatch(arg.value)) is not None:
            args.append(arg._replace(pin_file=posixpath.normpath(from_file["path"])))
        elif (variable := _VARIABLE.fullmatch(arg.value)) is not None:
            # `NAME: value` keys of the file (variables, matrix rows): where `$NAME` is set.
            key = re.escape(variable["name"] or variable["github"])
            pattern = rf"^[ \t]*(?:-[ \t]+)?{key}[ \t]*:[ \t]*(?P<q>[\"']?)(?P<v>[^\s\"'#]+)(?P=q)"
            found = [
                arg._replace(value=m["v"], start=m.start("v"), end=m.end("v"), path=build.path)
                for m in re.finditer(pattern, text, re.M)
            ]
            args += [a._replace(line=line_of(text, a.start)) for a in found] or [arg]
        else:
            args.append(arg)
    return build._replace(args=tuple(args))


def scripts_run(text: str) -> list[str]:
    """The shell scripts a CI file names (`bash .gitlab/scripts/build.sh`), as written."""
    return sorted({posixpath.normpath(m["path"]) for m in _SCRIPT.finditer(text)})
