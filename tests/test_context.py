"""Context: paths the user typed are read from where uvdock was started."""

from __future__ import annotations

from pathlib import Path

import pytest

from uvdock.cli.spec import GlobalOptions
from uvdock.context import Context
from uvdock.ui.output import Output


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("uv.lock", "/work/here/uv.lock"),
        ("../other/uv.lock", "/work/here/../other/uv.lock"),
        (Path("sub/uv.lock"), "/work/here/sub/uv.lock"),
        ("/abs/uv.lock", "/abs/uv.lock"),
        (Path("/abs/dir"), "/abs/dir"),
    ],
)
def test_user_path(typed: str | Path, expected: str) -> None:
    ctx = Context(GlobalOptions(), Output(), env={}, cwd=Path("/work/here"))
    assert ctx.user_path(typed) == Path(expected)
