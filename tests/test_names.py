"""names: PEP 503 normalisation, as packaging canonicalises."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from uvdock.project.names import normalize_name


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        ("Foo", "foo"),
        ("foo_bar", "foo-bar"),
        ("Foo.Bar__baz", "foo-bar-baz"),
        ("emerging_optimizers", "emerging-optimizers"),
        ("a-_.b", "a-b"),
    ],
)
def test_examples(name: str, normalized: str) -> None:
    assert normalize_name(name) == normalized


@given(st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", fullmatch=True))
def test_agrees_with_packaging(name: str) -> None:
    assert normalize_name(name) == canonicalize_name(name)
