"""Verify a bump of the GitLab build file with a real YAML parser (formats/yaml.py): the line
scanner's span edit (image/gitlab.py) must change exactly the BASE_IMAGE of every row the
lane's rules select, to the new image, and nothing else; otherwise refused, nothing written."""

from __future__ import annotations

from collections.abc import Sequence

from uvdock.formats.yaml import YMap, YScalar, YValue, edit_changes, refusal, sequence_mappings
from uvdock.image.pins import BASE_IMAGE_KEY, LaneRules
from uvdock.registry.tags import PREFIX

_SHAPES = (
    "a flow mapping, an anchor or alias, a tag, a value over several lines, or `-` on a line"
    " of its own"
)


def _fields(display: str, row: YMap, keys: set[str], *, strict: bool) -> dict[str, str] | None:
    """The row's values of the keys the lane rules use; a value that is no string makes the
    row's lane unclear: refused when the row builds an NGC image (`strict`), else None."""
    fields: dict[str, str] = {}
    for key in sorted(keys & row.items.keys()):
        value = row.items[key]
        if isinstance(value, YScalar) and value.text is not None:
            fields[key] = value.text
            continue
        if not strict:
            return None
        shape = (
            f"`{value.value or '~'}` ({value.tag.rsplit(':', 1)[-1]})"
            if isinstance(value, YScalar)
            else "a collection"
        )
        raise refusal(
            display,
            value.line,
            f"{key} of this matrix row is {shape} as YAML reads it, not a string: which lane"
            " the row builds is unclear; write a string value or drop the key",
        )
    return fields


def _lane_rows(
    display: str, docs: Sequence[YValue], rules: Sequence[LaneRules], lane: str
) -> dict[tuple[str | int, ...], YScalar]:
    """The BASE_IMAGE of every row the lane's rules select, by its path in the document."""
    rule = next(r for r in rules if r.lane == lane)
    keys = {key for r in rules for alternative in r.matrix_match for key, _ in alternative}
    rows: dict[tuple[str | int, ...], YScalar] = {}
    for number, doc in enumerate(docs):
        for path, row in sequence_mappings(doc):
            if (base := row.items.get(BASE_IMAGE_KEY)) is None:
                continue
            ngc = isinstance(base, YScalar) and base.value.startswith(PREFIX)
            fields = _fields(display, row, keys, strict=ngc)
            if fields is None or not rule.selects(fields):
                continue
            if not isinstance(base, YScalar) or base.text is None:
                raise refusal(
                    display, row.line, f"the {BASE_IMAGE_KEY} of this {lane} row is no string"
                )
            rows[(number, *path, BASE_IMAGE_KEY)] = base
    return rows


def verify_matrix_bump(
    display: str, old: str, new: str, rules: Sequence[LaneRules], lane: str, image: str
) -> None:
    """Refuse unless, as YAML reads them, `new` is `old` with every `lane` row at `image`."""
    edit = edit_changes(display, old, new)
    expected = _lane_rows(display, edit.before, rules, lane)
    for path, was in edit.changed.items():
        if path not in expected:
            raise refusal(
                display,
                edit.after[path].line,
                f"the edit would change `{was.value[:60]}` here, which YAML does not read as the"
                f" {BASE_IMAGE_KEY} of a {lane} matrix row (text in a block scalar? the first of"
                " duplicate keys?)",
            )
    for path, was in expected.items():
        if edit.after[path].value != image:
            raise refusal(
                display,
                was.line,
                f"this {lane} matrix row's {BASE_IMAGE_KEY} would stay {was.value}: uvdock cannot"
                f" edit its shape exactly ({_SHAPES}); write it as `{BASE_IMAGE_KEY}: IMAGE` in a"
                " block mapping, then bump again",
            )
