"""YAML as a real parser reads it, to verify the span edits of image/ and recipes/.

The editors change bytes in place (quotes, comments and key order survive); this module
reads the text before and after with PyYAML's composer and returns what YAML means: anchors
and aliases resolved, `<<:` merge keys applied (the mapping's own keys win), the last of
duplicate keys winning (as PyYAML, GitLab and Megatron-LM's recipe loader read them), tags
kept on scalars. Every value remembers its line, so a refusal names file and line.

The callers (image/matrix_verify.py, recipes/verify.py) state which values an edit was meant
to change; anything else that changed, or an intended value that did not, refuses the edit
with nothing written. Domain-pure: never prints, never starts a process. PyYAML is imported
on the edit paths only (start-up time of `image check` is budgeted).
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, NamedTuple, Union

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


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


class _Builder:
    """Composed nodes to YValues. A node reached through several aliases is built once."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.built: dict[int, tuple[YValue, int]] = {}  # id(node) -> (value, expanded size)
        self.active: set[int] = set()

    def refuse(self, node: Node, message: str) -> InputRefused:
        return InputRefused(f"{self.display}:{_line(node)}: {message}; nothing was changed")

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
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    # The node graph holds no cycles to collect, and the cyclic collector's passes over the
    # growing graph made a large recipe's load superlinear (8000 cases: 3.4 s, 0.85 s without).
    collecting = gc.isenabled()
    gc.disable()
    try:
        nodes = [node for node in yaml.compose_all(text, Loader=loader) if node is not None]
        builder = _Builder(display)
        return [builder.build(node)[0] for node in nodes]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{display}:{mark.line + 1}" if mark is not None else display
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        state = "the edit would make it invalid YAML" if after_edit else "not valid YAML"
        raise InputRefused(f"{where}: {state} ({problem}); nothing was changed") from None
    finally:
        if collecting:
            gc.enable()


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


def sequence_mappings(
    value: YValue, path: tuple[str | int, ...] = ()
) -> list[tuple[tuple[str | int, ...], YMap]]:
    """Every mapping that is an item of a sequence, anywhere in the document, with its path."""
    found: list[tuple[tuple[str | int, ...], YMap]] = []
    if isinstance(value, YSeq):
        for index, item in enumerate(value.items):
            if isinstance(item, YMap):
                found.append(((*path, index), item))
            found.extend(sequence_mappings(item, (*path, index)))
    elif isinstance(value, YMap):
        for key, item in value.items.items():
            found.extend(sequence_mappings(item, (*path, key)))
    return found


def scalar_leaves(
    value: YValue, path: tuple[str | int, ...] = ()
) -> dict[tuple[str | int, ...], YScalar]:
    """Every scalar of the document by its path (keys and sequence indexes)."""
    if isinstance(value, YScalar):
        return {path: value}
    items = value.items.items() if isinstance(value, YMap) else enumerate(value.items)
    leaves: dict[tuple[str | int, ...], YScalar] = {}
    for key, item in items:
        leaves.update(scalar_leaves(item, (*path, key)))
    return leaves
