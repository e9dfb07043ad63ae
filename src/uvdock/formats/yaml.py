"""The one YAML reader (PyYAML) and the one edit verifier.

The editors of image/ and recipes/ change bytes in place (quotes, comments and key order
survive): `compose` gives them the nodes with their positions. `load` gives what YAML means:
aliases resolved, `<<:` merges applied (the mapping's own keys win), the last of duplicate keys
winning (as PyYAML, GitLab and Megatron-LM's recipe loader read them), every value with its
line so that a refusal names file and line. `edit_changes` reads an edit before and after.
PyYAML is imported inside the functions (start-up time of `image check` is budgeted).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, Union

from uvdock.errors import InputRefused

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
        return self.value if self.tag == _STR else None


class YMap(NamedTuple):
    line: int
    items: dict[str, YValue]


class YSeq(NamedTuple):
    line: int
    items: list[YValue]


YValue = Union[YScalar, YMap, YSeq]  # noqa: UP007 (a runtime alias: NamedTuples refer to it)
Path = tuple[str | int, ...]


def refusal(display: str, line: int, message: str) -> InputRefused:
    return InputRefused(f"{display}:{line}: {message}; nothing was changed")


def load(text: str, display: str, *, after_edit: bool = False) -> list[YValue]:
    """The documents of `text` as YAML reads them. Text YAML rejects is refused (exit 2)."""
    built: dict[int, tuple[YValue, int]] = {}  # id(node) -> (value, expanded size)

    def build(node: Any, depth: int) -> tuple[YValue, int]:
        if id(node) in built:  # a node reached through several aliases is built once
            return built[id(node)]
        line = node.start_mark.line + 1
        if depth > _MAX_DEPTH:  # a recursive structure (`&a [*a]`) too ends here
            raise refusal(display, line, "a recursive or too deeply nested YAML structure")
        kind = type(node).__name__
        if kind == "ScalarNode":
            result: tuple[YValue, int] = (YScalar(line, node.tag, node.value), 1)
        elif kind == "SequenceNode":
            items = [build(item, depth + 1) for item in node.value]
            result = (YSeq(line, [v for v, _ in items]), 1 + sum(s for _, s in items))
        else:
            merged: dict[str, YValue] = {}
            own: dict[str, YValue] = {}
            size = 1
            for key, value_node in node.value:
                if key.tag == _MERGE:
                    many = type(value_node).__name__ == "SequenceNode"
                    for source in reversed(value_node.value if many else [value_node]):
                        value, count = build(source, depth + 1)  # earlier sources win
                        if not isinstance(value, YMap):
                            raise refusal(display, value.line, "a `<<:` merge of no mapping")
                        merged.update(value.items)
                        size += count
                    continue
                if not is_scalar(key):
                    line = key.start_mark.line + 1
                    raise refusal(display, line, "a mapping key that is not a plain value")
                own[key.value], count = build(value_node, depth + 1)  # the last key wins
                size += count
            result = (YMap(line, {**merged, **own}), size)
        if result[1] > _MAX_EXPANDED:
            raise refusal(display, line, f"aliases expand this YAML beyond {_MAX_EXPANDED} values")
        built[id(node)] = result
        return result

    documents = compose(text, display, after_edit=after_edit) or []
    with paused_collector():
        return [build(node, 0)[0] for node in documents]


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


def compose(text: str, display: str = "", *, after_edit: bool = False) -> list[Any] | None:
    """The documents' nodes with their spans. Text YAML rejects: None, or refused (exit 2)
    when the caller names the file (`display`)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with paused_collector():
        try:
            return list(yaml.compose_all(text, Loader=loader))
        except (yaml.YAMLError, RecursionError) as exc:
            if not display:
                return None
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            where = f"{display}:{mark.line + 1}" if mark is not None else display
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            state = "the edit would make it invalid YAML" if after_edit else "not valid YAML"
            raise InputRefused(f"{where}: {state} ({problem}); nothing was changed") from None


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
    found = [value] if isinstance(value, YScalar) else value.items
    if isinstance(value, YMap) or any(getattr(item, "tag", "") != _STR for item in found):
        return None
    return tuple(item.value for item in found if isinstance(item, YScalar))


def _walk(value: YValue, path: Path = (), parent: YValue | None = None) -> Iterator[Any]:
    """(path, value, parent) of `value` and of everything under it, in document order."""
    yield path, value, parent
    if not isinstance(value, YScalar):
        items = value.items.items() if isinstance(value, YMap) else enumerate(value.items)
        for key, item in items:
            yield from _walk(item, (*path, key), value)


def sequence_mappings(value: YValue) -> list[tuple[Path, YMap]]:
    return [(p, v) for p, v, up in _walk(value) if isinstance(v, YMap) and isinstance(up, YSeq)]


def scalar_leaves(value: YValue) -> dict[Path, YScalar]:
    return {path: v for path, v, _ in _walk(value) if isinstance(v, YScalar)}


def is_scalar(node: Any) -> bool:
    return type(node).__name__ == "ScalarNode"


def mappings(root: Any) -> Iterator[Any]:
    """Every mapping under `root` once, in document order. An alias is the anchored node
    again: visiting it once keeps a hostile file of nested aliases (billion laughs)
    linear, and no recursion means no depth limit to hit."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        kind = type(node).__name__
        if kind == "MappingNode":
            yield node
            stack.extend(part for pair in reversed(node.value) for part in reversed(pair))
        elif kind == "SequenceNode":
            stack.extend(reversed(node.value))


def by_key(mapping: Any) -> dict[str, Any]:
    return {k.value: v for k, v in mapping.value if is_scalar(k) and isinstance(k.value, str)}


class Edit(NamedTuple):
    before: list[YValue]  # the documents as they are (through the caller's view)
    after: dict[Path, YScalar]  # every scalar after the edit, by (document, *path)
    changed: dict[Path, YScalar]  # the scalars the edit changes, as they were


def edit_changes(
    display: str, old: str, new: str, view: Callable[[YValue], YValue] | None = None
) -> Edit:
    """What an edit changes as YAML reads it. Refused (exit 2) when `new` is no YAML or when
    the edit changes the structure (a key, an item, a scalar become a collection).

    `view` says what a document means to the caller (a recipe: its runs, however its rows
    are split); both texts are compared through it, so only what it keeps may change.
    """
    see = view or (lambda doc: doc)
    # Paths start with the document's index: the documents read as one sequence.
    before = [see(doc) for doc in load(old, display)]
    old_leaves = scalar_leaves(YSeq(0, before))
    new_leaves = scalar_leaves(YSeq(0, [see(doc) for doc in load(new, display, after_edit=True)]))
    if old_leaves.keys() != new_leaves.keys():
        moved = min(old_leaves.keys() ^ new_leaves.keys(), key=str)
        line = (old_leaves.get(moved) or new_leaves[moved]).line
        raise refusal(display, line, "the edit would change the structure of the YAML here")
    # A scalar changes when its tag or value does ([1:]: not its line).
    changed = {path: was for path, was in old_leaves.items() if was[1:] != new_leaves[path][1:]}
    return Edit(before, new_leaves, changed)
