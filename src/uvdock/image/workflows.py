"""Base-image pins in GitHub workflows: a step that builds a lane's Dockerfile with a
hard-coded `FROM_IMAGE_NAME`.

From 2025-09 to 2026-01 Megatron-LM's workflows built `docker/Dockerfile.ci.dev` with the
base image written into the workflow, in two shapes:

- a `run:` script: `docker build -f docker/Dockerfile.ci.dev --build-arg
  FROM_IMAGE_NAME="nvcr.io/nvidia/pytorch:TAG" ...` (the weekly uv.lock bump);
- a build action's `with:` mapping: `file: ./docker/Dockerfile.ci.dev` next to a
  `build-args: |` block holding the line `FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:TAG`.

Each is a managed pin of the lane whose `dockerfile` / `lts-dockerfile` the step names
(when both lanes build the same file, an `IMAGE_TYPE` build argument tells them apart):
listed, checked against the lane, bumped. The YAML is read with PyYAML's composer, which
keeps each scalar's place in the text, so a pin is the span of the reference inside the
original bytes; verify_edit re-reads the edited file and accepts it only when exactly
those references changed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from uvdock.errors import InputRefused
from uvdock.files.textlines import regular_file
from uvdock.image.pins import LaneRules, Pin, normalize_path
from uvdock.registry.tags import PREFIX

if TYPE_CHECKING:
    from pathlib import Path

_BUILD_ARG = re.compile(r"""FROM_IMAGE_NAME=(?P<quote>["']?)(?P<value>[^\s"'\\]+)""")
_IMAGE_TYPE = re.compile(r"""IMAGE_TYPE=["']?(?P<value>[A-Za-z0-9_-]+)""")
_BUILDERS = ("docker build", "docker buildx build", "podman build", "buildah bud")


def workflow_files(repo: Path, globs: Sequence[str]) -> list[str]:
    """The repository's files matching the configured globs, as relative POSIX paths.
    A glob that leaves the repository is refused (exit 2), like any configured path."""
    top = repo.resolve()
    found: set[str] = set()
    for pattern in globs:
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise InputRefused(
                f"configuration `workflow-files`: {pattern!r} must be a glob inside the repository",
                hint="use a path relative to the repository root, e.g. .github/workflows/*.yml",
            )
        for path in repo.glob(pattern):
            if not regular_file(path):  # also a symlink loop, which resolve() would raise on
                continue
            real = path.resolve()
            if real == top or top in real.parents:
                found.add(path.relative_to(repo).as_posix())
    return sorted(found)


def _scalar(node: Any) -> bool:
    return type(node).__name__ == "ScalarNode"


def _nodes(root: Any) -> Iterator[Any]:
    """Every node under `root` once, in document order. An alias is the anchored node
    again: visiting it once keeps a hostile file of nested aliases (billion laughs)
    linear, and no recursion means no depth limit to hit."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        kind = type(node).__name__
        if kind == "MappingNode":
            stack.extend(part for pair in reversed(node.value) for part in reversed(pair))
        elif kind == "SequenceNode":
            stack.extend(reversed(node.value))


def _mappings(node: Any) -> Iterator[Any]:
    """Every mapping node under `node`, in document order."""
    return (n for n in _nodes(node) if type(n).__name__ == "MappingNode")


def _fields(mapping: Any) -> dict[str, Any]:
    return {k.value: v for k, v in mapping.value if _scalar(k) and isinstance(k.value, str)}


def _lane_of(dockerfile: str, build_args: str, lanes: Sequence[LaneRules]) -> str | None:
    wanted = normalize_path(dockerfile.strip().strip("\"'"))
    lanes_of_file = [
        r.lane for r in lanes if r.dockerfile and normalize_path(r.dockerfile) == wanted
    ]
    if len(lanes_of_file) <= 1:
        return lanes_of_file[0] if lanes_of_file else None
    image_type = _IMAGE_TYPE.search(build_args)
    if image_type is not None and image_type["value"] in lanes_of_file:
        return image_type["value"]
    return lanes_of_file[0]


def _command_around(text: str, offset: int) -> str:
    """The shell command holding `offset`: its line and the lines `\\` continues it with."""
    start = text.rfind("\n", 0, offset) + 1
    while start > 1 and text[: start - 1].rstrip(" \t").endswith("\\"):
        start = text.rfind("\n", 0, start - 1) + 1
    end = text.find("\n", offset)
    while end != -1 and text[:end].rstrip(" \t").endswith("\\"):
        end = text.find("\n", end + 1)
    return text[start : len(text) if end == -1 else end]


def _dockerfile_of(command: str) -> str | None:
    """The `-f` / `--file` of a `docker build` command, None for any other command."""
    flat = command.replace("\\\n", " ")
    if not any(builder in " ".join(flat.split()) for builder in _BUILDERS):
        return None
    try:
        words = shlex.split(flat, comments=True)
    except ValueError:
        return None
    for index, word in enumerate(words):
        if word in ("-f", "--file") and index + 1 < len(words):
            return words[index + 1]
        if word.startswith(("--file=", "-f=")):
            return word.split("=", 1)[1]
    return None


def _pin(path: str, text: str, lane: str, start: int, end: int) -> Pin:
    value = text[start:end]
    return Pin(
        path, text.count("\n", 0, start) + 1, lane, value[len(PREFIX) :], True, "workflow",
        value, start, end,
    )  # fmt: skip


def _pins_in(
    path: str, text: str, node: Any, lanes: Sequence[LaneRules], dockerfile: str | None
) -> list[Pin]:
    """The FROM_IMAGE_NAME references inside one scalar's span of the text. `dockerfile`
    is the step's `file:` (a build action); None: read `-f` from each build command."""
    begin, finish = node.start_mark.index, node.end_mark.index
    raw = text[begin:finish]
    pins = []
    for match in _BUILD_ARG.finditer(raw):
        if not match["value"].startswith(PREFIX):
            continue  # `${{ env.BASE }}` and the like: the workflow passes a variable
        command = _command_around(raw, match.start())
        named = dockerfile if dockerfile is not None else _dockerfile_of(command)
        lane = _lane_of(named, command if dockerfile is None else raw, lanes) if named else None
        if lane is not None:
            start = begin + match.start("value")
            pins.append(_pin(path, text, lane, start, start + len(match["value"])))
    return pins


def compose(text: str) -> list[Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return list(yaml.compose_all(text, Loader=loader))


def workflow_pins(path: str, text: str, lanes: Sequence[LaneRules]) -> list[Pin]:
    """The managed pins one workflow file holds (none when it is not YAML)."""
    if "FROM_IMAGE_NAME" not in text or PREFIX not in text:
        return []  # most workflows: no YAML parse at all
    import yaml

    try:
        documents = compose(text)
    except (yaml.YAMLError, RecursionError):
        return []  # not YAML (or nested past the parser's depth): no pin to manage
    pins: list[Pin] = []
    for document in documents:
        for mapping in _mappings(document):
            fields = _fields(mapping)
            run, file, args = fields.get("run"), fields.get("file"), fields.get("build-args")
            if run is not None and _scalar(run):
                pins += _pins_in(path, text, run, lanes, None)
            if file is not None and args is not None and _scalar(file) and _scalar(args):
                pins += _pins_in(path, text, args, lanes, str(file.value))
    # An alias (`run: *build`) is the anchored node again: one span, one pin.
    return list({(pin.start, pin.end): pin for pin in pins}.values())


def _scalars(text: str) -> list[str]:
    return [str(n.value) for d in compose(text) for n in _nodes(d) if _scalar(n)]


def _swaps(before: list[str], after: list[str], replaced: Mapping[str, str]) -> int | None:
    """How many references YAML sees swapped from old to new, None when anything else
    differs (another scalar, another character, a scalar more or less)."""
    if len(before) != len(after):
        return None
    swaps = 0
    for old_value, new_value in zip(before, after, strict=True):
        if _undo_all(new_value, replaced) != _undo_all(old_value, replaced):
            return None
        swaps += sum(new_value.count(new) - old_value.count(new) for new in set(replaced.values()))
    return swaps


def _undo_all(value: str, replaced: Mapping[str, str]) -> str:
    """Every old and new reference as one placeholder: what must stay the same."""
    for ref in sorted({*replaced, *replaced.values()}, key=len, reverse=True):
        value = value.replace(ref, "\0REF\0")
    return value


def verify_edit(path: str, old: str, new: str, replaced: Mapping[str, str], count: int) -> None:
    """Refuse (exit 2, nothing written) an edit of a workflow after which YAML reads
    anything else than the same scalars with `count` references swapped as `replaced` says."""
    import yaml

    try:
        before, after = _scalars(old), _scalars(new)
    except (yaml.YAMLError, RecursionError) as exc:
        raise InputRefused(f"{path}: the bump would leave invalid YAML ({exc})") from None
    if _swaps(before, after, replaced) != count:
        raise InputRefused(
            f"{path}: the bump would change more (or less) than the base-image references "
            "as YAML reads them; nothing was written",
            hint=f"bump {path} by hand",
        )
