"""pyproject_merge: the three-way merge of pyproject.toml, on Megatron-LM's real file."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from conftest import MEGATRON_LM

from uvdock.merge.pyproject import merge_pyproject

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "megatron-lm" / "pyproject.toml"
MEGATRON = EXAMPLE.read_text(encoding="utf-8")  # the real file, as the repository ships it

# Each side's edits as (old, new) text replacements on Megatron-LM's file.
OURS_EDITS = (
    ('    "nemo-run",\n', '    "nemo-run",\n    "alpha>=1",\n'),
    (
        'dependencies = ["torch>=2.6.0", "numpy",',
        'dependencies = ["torch>=2.6.0", "numpy", "rich",',
    ),
    ('    "Pillow",\n', ""),
)
THEIRS_EDITS = (
    ('    "pyyaml",\n', '    "pyyaml",\n    "beta",  # added with a comment\n'),
    ('    "mock",\n', ""),
    ('    "tqdm",\n', '    "tqdm>=4.66",\n'),
    ('link-mode = "copy"\n', 'link-mode = "copy"\nprerelease = "allow"\n'),
    (
        'ci = ["python-gitlab", "slack-sdk", "pandas"]\n',
        'ci = ["python-gitlab", "slack-sdk", "pandas"]\nextra = ["x", { include-group = "ci" }]\n',
    ),
    (
        'nemo-run = { git = "https://github.com/NVIDIA-NeMo/Run.git", rev = "e3935393a290aed1822af52139b4b8ee270fed1f" }\n',
        'nemo-run = { git = "https://github.com/NVIDIA-NeMo/Run.git", rev = "v0.9.0" }\nzeta = { path = "vendor/zeta", editable = true }\n',
    ),
)


def edited(text: str, edits: tuple[tuple[str, str], ...]) -> str:
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def test_megatron_both_sides_merge_byte_exact() -> None:
    ours, theirs = edited(MEGATRON, OURS_EDITS), edited(MEGATRON, THEIRS_EDITS)
    expected = edited(ours, THEIRS_EDITS)  # the edits touch separate lines
    result = merge_pyproject(MEGATRON, ours, theirs)
    assert result.conflicts == ()
    assert result.text == expected
    # The other way round (a rebase swaps the sides) gives the same document.
    swapped = merge_pyproject(MEGATRON, theirs, ours)
    assert swapped.text == edited(theirs, OURS_EDITS)
    taken = {(t.path, t.entry, t.change, t.side) for t in result.taken}
    assert ("dependency-groups.test", "beta", "added", "theirs") in taken
    assert ("dependency-groups.test", "mock", "removed", "theirs") in taken
    assert ("dependency-groups.test", "alpha", "added", "ours") in taken
    assert ("project.optional-dependencies.dev", "tqdm", "changed", "theirs") in taken
    assert ("project.optional-dependencies.dev", "pillow", "removed", "ours") in taken
    assert ("tool.uv.sources.zeta", "", "added", "theirs") in taken
    assert ("tool.uv.sources.nemo-run", "", "changed", "theirs") in taken


def test_crlf_file_keeps_crlf() -> None:
    def crlf(text: str) -> str:
        return text.replace("\n", "\r\n")

    ours, theirs = edited(MEGATRON, OURS_EDITS), edited(MEGATRON, THEIRS_EDITS)
    result = merge_pyproject(crlf(MEGATRON), crlf(ours), crlf(theirs))
    assert result.text == crlf(edited(ours, THEIRS_EDITS))


def test_one_side_unchanged_returns_the_other_verbatim() -> None:
    theirs = edited(MEGATRON, THEIRS_EDITS)
    assert merge_pyproject(MEGATRON, MEGATRON, theirs).text == theirs
    assert merge_pyproject(MEGATRON, theirs, MEGATRON).text == theirs


BASE = """\
[project]
name = "demo"
version = "0.1.0"
dependencies = [
    "delta",
    "gamma>=1",  # keep gamma
]

[dependency-groups]
feature = ["delta"]
"""


def side(text: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def test_same_bump_on_both_sides_is_no_conflict() -> None:
    bumped = side(BASE, ('"gamma>=1"', '"gamma>=2"'))
    ours = side(bumped, ('    "delta",\n', '    "alpha",\n    "delta",\n'))
    theirs = side(
        bumped, ('"gamma>=2",  # keep gamma\n', '"gamma >= 2",  # keep gamma\n    "beta",\n')
    )
    result = merge_pyproject(BASE, ours, theirs)
    assert result.conflicts == ()
    assert result.text is not None
    assert tomllib.loads(result.text)["project"]["dependencies"] == [
        "alpha",
        "delta",
        "gamma>=2",
        "beta",
    ]


def test_remove_next_to_an_addition() -> None:
    ours = side(BASE, ('    "delta",\n', ""))
    theirs = side(BASE, ('    "delta",\n', '    "delta",\n    "epsilon",\n'))
    result = merge_pyproject(BASE, ours, theirs)
    assert result.text == side(BASE, ('    "delta",\n', '    "epsilon",\n'))


@pytest.mark.parametrize(
    ("ours_edit", "theirs_edit", "line"),
    [
        (
            ('"gamma>=1"', '"gamma>=2"'),
            ('"gamma>=1"', '"gamma>=3"'),
            'project.dependencies[gamma]: ours "gamma>=2", theirs "gamma>=3"',
        ),
        (
            ('    "delta",\n', '    "delta",\n    "beta>=1",\n'),
            ('    "delta",\n', '    "delta",\n    "beta>=2",\n'),
            'project.dependencies[beta]: ours "beta>=1", theirs "beta>=2"',
        ),
        (
            ('    "gamma>=1",  # keep gamma\n', ""),
            ('"gamma>=1"', '"gamma>=3"'),
            'project.dependencies[gamma]: ours (absent), theirs "gamma>=3"',
        ),
        (
            ('version = "0.1.0"', 'version = "0.2.0"'),
            ('version = "0.1.0"', 'version = "0.3.0"'),
            'project.version: ours "0.2.0", theirs "0.3.0"',
        ),
    ],
)
def test_real_conflicts_are_reported(
    ours_edit: tuple[str, str], theirs_edit: tuple[str, str], line: str
) -> None:
    # Each side also makes a change that would merge, so the refusal is about the conflict.
    ours = side(BASE, ours_edit, ('feature = ["delta"]', 'feature = ["delta", "o"]'))
    theirs = side(BASE, theirs_edit, ('name = "demo"', 'name = "demo"\ndescription = "x"'))
    result = merge_pyproject(BASE, ours, theirs)
    assert result.text is None
    assert [c.line() for c in result.conflicts] == [line]


def test_include_group_entries_and_new_groups() -> None:
    ours = side(
        BASE,
        ('feature = ["delta"]', 'feature = ["delta", { include-group = "lint" }]\nlint = ["ruff"]'),
    )
    theirs = side(BASE, ('feature = ["delta"]', 'feature = ["delta", "beta"]\ndocs = ["sphinx"]'))
    result = merge_pyproject(BASE, ours, theirs)
    assert result.text is not None
    groups = tomllib.loads(result.text)["dependency-groups"]
    assert groups == {
        "feature": ["delta", {"include-group": "lint"}, "beta"],
        "lint": ["ruff"],
        "docs": ["sphinx"],
    }
    clash = side(
        BASE,
        (
            'feature = ["delta"]',
            'feature = ["delta", { include-group = "docs" }]\ndocs = ["sphinx>=7"]',
        ),
    )
    refused = merge_pyproject(BASE, clash, theirs)
    assert [c.path for c in refused.conflicts] == ["dependency-groups.docs[sphinx]"]


def test_uv_index_entries_merge_by_name() -> None:
    base = BASE + '\n[[tool.uv.index]]\nname = "a"\nurl = "https://a.invalid/simple"\n'
    ours = base + '\n[[tool.uv.index]]\nname = "b"\nurl = "https://b.invalid/simple"\n'
    theirs = base + '\n[[tool.uv.index]]\nname = "c"\nurl = "https://c.invalid/simple"\n'
    result = merge_pyproject(base, ours, theirs)
    assert result.text is not None
    names = [i["name"] for i in tomllib.loads(result.text)["tool"]["uv"]["index"]]
    assert names == ["a", "b", "c"]
    other = base.replace("https://a.invalid", "https://mirror.invalid")
    clash = merge_pyproject(base, ours.replace("https://a.invalid", "https://x.invalid"), other)
    assert [c.path for c in clash.conflicts] == ["tool.uv.index[a].url"]


def test_unparseable_side_raises_value_error() -> None:
    with pytest.raises(ValueError):
        merge_pyproject(BASE, BASE + "\n<<<<<<< HEAD\n", BASE + "\nx = 1\n")


def test_example_copy_is_the_shared_file() -> None:
    shared = MEGATRON_LM / "pyproject.toml"
    if not shared.is_file():
        pytest.skip("../shared/megatron-lm is not available (a user's clone has none)")
    assert shared.read_text(encoding="utf-8") == MEGATRON


def test_uv_sources_keys_are_one_package_however_spelled() -> None:
    # PEP 503: flash_mla and Flash-MLA are the package flash-mla. Ours kept its spelling,
    # theirs moved the revision under another spelling: one package, theirs' revision.
    sources = '\n[tool.uv.sources]\nflash_mla = { git = "https://g.invalid/f", rev = "a1" }\n'
    base = BASE + sources
    ours = side(base, ('"delta",\n', '"delta",\n    "alpha",\n'))
    theirs = BASE + sources.replace(
        'flash_mla = { git = "https://g.invalid/f", rev = "a1" }',
        'Flash-MLA = { git = "https://g.invalid/f", rev = "b2" }',
    )
    result = merge_pyproject(base, ours, theirs)
    assert result.conflicts == ()
    assert result.text is not None
    merged = tomllib.loads(result.text)["tool"]["uv"]["sources"]
    assert merged == {"flash_mla": {"git": "https://g.invalid/f", "rev": "b2"}}
    # Both sides changing the one package differently is a conflict, not two packages.
    clash = merge_pyproject(base, ours.replace('rev = "a1"', 'rev = "c3"'), theirs)
    assert [c.path for c in clash.conflicts] == ["tool.uv.sources.flash_mla"]


def test_entry_added_after_a_comment_line_keeps_its_trailing_comma() -> None:
    # `uv remove gamma` on one side leaves gamma's trailing comment as a line of its own;
    # the other side's `uv add zeta` after gamma must keep the list's trailing commas.
    base = '[project]\ndependencies = [\n    "delta",\n    "gamma<2",  # why\n]\n'
    ours = '[project]\ndependencies = [\n    "delta",\n    # why\n]\n'
    theirs = '[project]\ndependencies = [\n    "delta",\n    "gamma<2",  # why\n    "zeta",\n]\n'
    result = merge_pyproject(base, ours, theirs)
    assert result.text == '[project]\ndependencies = [\n    "delta",\n    # why\n    "zeta",\n]\n'


def test_index_tables_added_on_both_sides_stay_apart() -> None:
    # Both sides append a [[tool.uv.index]] after a blank line: the merged file keeps the
    # blank line between the two new tables, as each side wrote it.
    base = '[project]\nname = "d"\n\n[[tool.uv.index]]\nname = "one"\nurl = "https://one"\n'
    ours = base + '\n[[tool.uv.index]]\nname = "two"\nurl = "https://two"\n'
    theirs = base + '\n[[tool.uv.index]]\nname = "three"\nurl = "https://three"\n'
    result = merge_pyproject(base, ours, theirs)
    assert result.text == ours + '\n[[tool.uv.index]]\nname = "three"\nurl = "https://three"\n'
