"""YAML as PyYAML reads it: the one YAML reader, for the CI builds and the span edits.

The editors of image/ and recipes/ change bytes in place (quotes, comments and key order
survive). `compose` gives the nodes with their positions in the text (where a value starts and
ends); `load` gives what YAML means: anchors and aliases resolved, `<<:` merge keys applied
(the mapping's own keys win), the last of duplicate keys winning (as PyYAML, GitLab and
Megatron-LM's recipe loader read them), tags kept on scalars. Every value remembers its line,
so a refusal names file and line. `edit_changes` reads an edit before and after: the structure
must stay, and the callers say which of the changed scalars they meant to change.

Domain-pure: never prints, never starts a process. PyYAML is imported inside the functions
(start-up time of `image check` is budgeted).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, Union

from uvdock.errors import InputRefused

if TYPE_CHECKING:
    from yaml.nodes import Node

_MERGE = "tag:yaml.org,2002:merge"
_STR = "tag:yaml.org,2002:str"
# Aliases can multiply a small text into a huge document ("billion laughs"): the expanded
# size is counted and a document beyond it is refused rather than walked.
_MAX_EXPANDED = 1_000_000
_MAX_DEPTH = 200


class YScalar(NamedTuple):
    line: int  # 1-based
    tag: str  # resolved: tag:yaml.org,2002:str, ...:null, ...:int, or an explicit tag
    value: str

    @property
    def text(self) -> str | None:
        """The value as a string; None for anything YAML does not read as a string."""
        return self.value if self.tag == _STR else None


class YMap(NamedTuple):
    line: int
    items: dict[str, YValue]


class YSeq(NamedTuple):
    line: int
    items: list[YValue]


YValue = Union[YScalar, YMap, YSeq]  # noqa: UP007 (a runtime alias: NamedTuples refer to it)
Path = tuple[str | int, ...]


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


class _Builder:
    """Composed nodes to YValues. A node reached through several aliases is built once."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.built: dict[int, tuple[YValue, int]] = {}  # id(node) -> (value, expanded size)
        self.active: set[int] = set()

    def refuse(self, node: Node, message: str) -> InputRefused:
        return refusal(self.display, _line(node), message)

    def build(self, node: Node, depth: int = 0) -> tuple[YValue, int]:
        from yaml.nodes import MappingNode, ScalarNode, SequenceNode

        key = id(node)
        if key in self.built:
            return self.built[key]
        if key in self.active or depth > _MAX_DEPTH:
            raise self.refuse(node, "a recursive or too deeply nested YAML structure")
        self.active.add(key)
        try:
            if isinstance(node, ScalarNode):
                result: tuple[YValue, int] = (YScalar(_line(node), node.tag, node.value), 1)
            elif isinstance(node, SequenceNode):
                built = [self.build(item, depth + 1) for item in node.value]
                size = 1 + sum(s for _, s in built)
                result = (YSeq(_line(node), [v for v, _ in built]), size)
            elif isinstance(node, MappingNode):
                result = self._mapping(node, depth)
            else:  # pragma: no cover - the composer makes only these three
                raise self.refuse(node, f"an unknown YAML node {type(node).__name__}")
        finally:
            self.active.discard(key)
        if result[1] > _MAX_EXPANDED:
            raise self.refuse(node, f"aliases expand this YAML beyond {_MAX_EXPANDED} values")
        self.built[key] = result
        return result

    def _mapping(self, node: Node, depth: int) -> tuple[YValue, int]:
        from yaml.nodes import MappingNode, ScalarNode, SequenceNode

        merged: dict[str, YValue] = {}
        own: dict[str, YValue] = {}
        size = 1
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                for source in reversed(sources):  # earlier sources win over later ones
                    if not isinstance(source, MappingNode):
                        raise self.refuse(source, "a `<<:` merge of something not a mapping")
                    value, count = self.build(source, depth + 1)
                    assert isinstance(value, YMap)
                    merged.update(value.items)
                    size += count
                continue
            if not isinstance(key_node, ScalarNode):
                raise self.refuse(key_node, "a mapping key that is not a plain value")
            value, count = self.build(value_node, depth + 1)
            own[key_node.value] = value  # a duplicate key: the last one wins
            size += count
        return YMap(_line(node), {**merged, **own}), size


def load(text: str, display: str, *, after_edit: bool = False) -> list[YValue]:
    """The documents of `text` as YAML reads them. Text YAML rejects is refused (exit 2)."""
    documents = compose(text, display, after_edit=after_edit) or []
    builder = _Builder(display)
    with paused_collector():
        return [builder.build(node)[0] for node in documents if node is not None]


@contextlib.contextmanager
def paused_collector() -> Iterator[None]:
    """The node graph holds no cycles to collect, and the cyclic collector's passes over the
    growing graph made a large recipe's load superlinear (8000 cases: 3.4 s, 0.85 s without)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _not_yaml(exc: Exception, display: str, after_edit: bool = False) -> InputRefused:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"{display}:{mark.line + 1}" if mark is not None else display
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    state = "the edit would make it invalid YAML" if after_edit else "not valid YAML"
    return InputRefused(f"{where}: {state} ({problem}); nothing was changed")


def plain(value: YValue) -> object:
    """A value without lines, for comparing what two texts mean."""
    if isinstance(value, YScalar):
        return (value.tag, value.value)
    if isinstance(value, YSeq):
        return tuple(plain(item) for item in value.items)
    return tuple(sorted((key, plain(item)) for key, item in value.items.items()))


def words(value: YValue | None) -> tuple[str, ...] | None:
    """A list of strings (or one string) as a tuple; None for any other shape."""
    if value is None:
        return ()
    if isinstance(value, YScalar):
        return (value.value,) if value.tag == _STR else None
    if isinstance(value, YSeq):
        found = [item.value for item in value.items if isinstance(item, YScalar)]
        if len(found) != len(value.items) or any(
            isinstance(item, YScalar) and item.tag != _STR for item in value.items
        ):
            return None
        return tuple(found)
    return None


def sequence_mappings(value: YValue, path: Path = ()) -> list[tuple[Path, YMap]]:
    """Every mapping that is an item of a sequence, anywhere in the document, with its path."""
    found: list[tuple[Path, YMap]] = []
    if isinstance(value, YSeq):
        for index, item in enumerate(value.items):
            if isinstance(item, YMap):
                found.append(((*path, index), item))
            found.extend(sequence_mappings(item, (*path, index)))
    elif isinstance(value, YMap):
        for key, item in value.items.items():
            found.extend(sequence_mappings(item, (*path, key)))
    return found


def scalar_leaves(value: YValue, path: Path = ()) -> dict[Path, YScalar]:
    """Every scalar of the document by its path (keys and sequence indexes)."""
    if isinstance(value, YScalar):
        return {path: value}
    items = value.items.items() if isinstance(value, YMap) else enumerate(value.items)
    leaves: dict[Path, YScalar] = {}
    for key, item in items:
        leaves.update(scalar_leaves(item, (*path, key)))
    return leaves


def compose(text: str, display: str = "", *, after_edit: bool = False) -> list[Any] | None:
    """The documents' nodes, each with its span in `text`. Text YAML rejects: None, or
    refused (exit 2) when the caller names the file (`display`)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with paused_collector():
        try:
            return list(yaml.compose_all(text, Loader=loader))
        except (yaml.YAMLError, RecursionError) as exc:
            if display:
                raise _not_yaml(exc, display, after_edit) from None
            return None


def is_scalar(node: Any) -> bool:
    return type(node).__name__ == "ScalarNode"


def mappings(root: Any) -> Iterator[Any]:
    """Every mapping node under `root`, in document order."""
    return (node for node in nodes(root) if type(node).__name__ == "MappingNode")


def nodes(root: Any) -> Iterator[Any]:
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


def by_key(mapping: Any) -> dict[str, Any]:
    """A mapping node's values by their plain keys."""
    return {k.value: v for k, v in mapping.value if is_scalar(k) and isinstance(k.value, str)}


class Edit(NamedTuple):
    before: list[YValue]  # the documents as they are
    after: dict[Path, YScalar]  # every scalar after the edit, by (document, *path)
    changed: dict[Path, YScalar]  # the scalars the edit changes, as they were


def refusal(display: str, line: int, message: str) -> InputRefused:
    return InputRefused(f"{display}:{line}: {message}; nothing was changed")


def edit_changes(display: str, old: str, new: str) -> Edit:
    """What an edit changes as YAML reads it. Refused (exit 2) when `new` is no YAML or when
    the edit changes the structure (a key, an item, a scalar become a collection)."""
    before = load(old, display)
    after = load(new, display, after_edit=True)
    old_leaves, new_leaves = _leaves(before), _leaves(after)
    if old_leaves.keys() != new_leaves.keys():
        moved = min(old_leaves.keys() ^ new_leaves.keys(), key=str)
        line = (old_leaves.get(moved) or new_leaves[moved]).line
        raise refusal(display, line, "the edit would change the structure of the YAML here")
    changed = {
        path: was
        for path, was in old_leaves.items()
        if (was.tag, was.value) != (new_leaves[path].tag, new_leaves[path].value)
    }
    return Edit(before, new_leaves, changed)


def _leaves(docs: list[YValue]) -> dict[Path, YScalar]:
    return {(n, *p): s for n, doc in enumerate(docs) for p, s in scalar_leaves(doc).items()}
