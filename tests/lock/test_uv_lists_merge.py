"""uv's set-like lists in [tool.uv] merge entry by entry; only a real conflict is refused."""

from __future__ import annotations

import tomllib

import pytest

from uvdock.merge.pyproject import merge_pyproject

BASE = """\
[project]
name = "demo"
version = "0.1.0"

[tool.uv]
no-build-isolation-package = ["causal-conv1d", "flash_mla"]
environments = ["sys_platform == 'linux'"]
required-environments = ["sys_platform == 'linux' and platform_machine == 'x86_64'"]
conflicts = [[{ extra = "cu12" }, { extra = "cu13" }]]
override-dependencies = ["torch; sys_platform == 'never'"]
"""


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def uv(text: str | None) -> dict[str, object]:
    assert text is not None
    table = tomllib.loads(text)["tool"]["uv"]
    assert isinstance(table, dict)
    return table


@pytest.mark.parametrize(
    ("key", "ours_new", "theirs_new", "merged"),
    [
        (
            "no-build-isolation-package",
            '["causal-conv1d", "flash_mla", "mamba-ssm"]',
            '["causal-conv1d", "flash_mla", "deep_gemm"]',
            ["causal-conv1d", "flash_mla", "mamba-ssm", "deep_gemm"],
        ),
        (
            "environments",
            "[\"sys_platform == 'linux'\", \"sys_platform == 'darwin'\"]",
            "[\"sys_platform == 'linux'\", \"sys_platform == 'win32'\"]",
            ["sys_platform == 'linux'", "sys_platform == 'darwin'", "sys_platform == 'win32'"],
        ),
        (
            "conflicts",
            '[[{ extra = "cu12" }, { extra = "cu13" }], [{ group = "a" }, { group = "b" }]]',
            '[[{ extra = "cu12" }, { extra = "cu13" }], [{ extra = "x" }, { extra = "y" }]]',
            [
                [{"extra": "cu12"}, {"extra": "cu13"}],
                [{"group": "a"}, {"group": "b"}],
                [{"extra": "x"}, {"extra": "y"}],
            ],
        ),
    ],
)
def test_both_sides_adding_take_the_union(
    key: str, ours_new: str, theirs_new: str, merged: list[object]
) -> None:
    line = next(li for li in BASE.splitlines() if li.startswith(f"{key} ="))
    ours = edit(BASE, line, f"{key} = {ours_new}")
    theirs = edit(BASE, line, f"{key} = {theirs_new}")
    result = merge_pyproject(BASE, ours, theirs)
    assert result.conflicts == ()
    assert uv(result.text)[key] == merged


def test_names_are_pep_503_and_markers_are_normalised() -> None:
    # theirs respells flash_mla (no change to uv) and quotes a marker differently; ours adds.
    ours = edit(BASE, '"flash_mla"]', '"flash_mla", "mamba-ssm"]')
    theirs = edit(BASE, '"flash_mla"]', '"Flash.MLA"]')
    theirs = edit(theirs, "[\"sys_platform == 'linux'\"]", "['sys_platform == \"linux\"']")
    result = merge_pyproject(BASE, ours, theirs)
    assert result.conflicts == ()
    table = uv(result.text)
    assert table["no-build-isolation-package"] == ["causal-conv1d", "Flash.MLA", "mamba-ssm"]


def test_a_set_of_conflicts_in_another_order_is_the_same_set() -> None:
    # ours writes the one set in another order; theirs adds a second set
    ours = edit(
        BASE,
        '[[{ extra = "cu12" }, { extra = "cu13" }]]',
        '[[{ extra = "cu13" }, { extra = "cu12" }]]',
    )
    theirs = edit(
        BASE, '{ extra = "cu13" }]]', '{ extra = "cu13" }], [{ extra = "x" }, { extra = "y" }]]'
    )
    result = merge_pyproject(BASE, ours, theirs)
    assert result.conflicts == ()
    assert uv(result.text)["conflicts"] == [
        [{"extra": "cu13"}, {"extra": "cu12"}],
        [{"extra": "x"}, {"extra": "y"}],
    ]


def test_one_removes_what_the_other_respells_is_a_real_conflict() -> None:
    ours = edit(BASE, '"causal-conv1d", ', "")
    theirs = edit(BASE, '"causal-conv1d"', '"causal_conv1d"')
    result = merge_pyproject(BASE, ours, theirs)
    assert result.text is None
    assert [c.path for c in result.conflicts] == [
        "tool.uv.no-build-isolation-package[causal-conv1d]"
    ]
