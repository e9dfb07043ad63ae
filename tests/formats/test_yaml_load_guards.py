"""The YAML reader's guards against hostile shapes: a document that refers to itself and one
whose aliases expand beyond reason are each one refusal naming file and line."""

from __future__ import annotations

import pytest

from uvdock.errors import InputRefused
from uvdock.formats.yaml import load


@pytest.mark.parametrize(
    "text",
    ["a: &x [b, *x]\n", "a:\n  - &x\n    k: [*x]\n", "a: &x [*x, *x, *x]\n"],
)
def test_a_recursive_document_is_refused(text: str) -> None:
    with pytest.raises(InputRefused, match=r"^f\.yml:\d+: a recursive or too deeply nested"):
        load(text, "f.yml")


def test_aliases_that_expand_too_far_are_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    with pytest.raises(InputRefused, match=r"aliases expand this YAML beyond 1000000 values"):
        load("\n".join(lines) + "\n", "f.yml")
