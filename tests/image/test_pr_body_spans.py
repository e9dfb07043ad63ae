"""image bump --pr-body: pin text read from the repository stays inside its code spans."""

from __future__ import annotations

import pytest
from samples import gfm

from uvdock.image import pr_body
from uvdock.image.pins import Pin

HOSTILE = ["26.06-py3`<img/src=x>`", "`26.06-py3", "26.06-py3`", "a``[x](https://evil.example/)"]


def _code_spans(text: str) -> list[str]:
    return [
        child.content
        for token in gfm.tokens(text)
        if token.type == "inline"
        for child in token.children or []
        if child.type == "code_inline"
    ]


@pytest.mark.parametrize("old", HOSTILE)
def test_a_backtick_in_a_pin_cannot_end_its_code_span(old: str) -> None:
    pin = Pin("docker/.ngc_version.dev", 1, "dev", old, True, "pin-file", platform="amd64")
    body = pr_body.render("dev", "26.09-py3", old, [pin])
    spans = _code_spans(body)
    assert old in spans
    assert f"nvcr.io/nvidia/pytorch:{old}" in spans
    html = gfm._PARSER.render(body)
    assert "<img" not in html and "<a " not in html
