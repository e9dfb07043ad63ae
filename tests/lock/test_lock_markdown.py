"""lock diff as a Markdown table (Renovate / Dependabot style) on the real Megatron-LM lock."""

from __future__ import annotations

from pathlib import Path

import pytest
from samples import gfm

from uvdock.lock import lockfile, markdown
from uvdock.lock.markdown import Described, classify

MEGATRON_LOCK = Path(__file__).resolve().parents[2] / "examples" / "megatron-lm" / "uv.lock"
OLD_REV = "714dd1a4a980f7937a74343d19a8eba4fe321480"
NEW_REV = "0f5c2f4e1d3b2a8c9e7f6a5b4c3d2e1f0a9b8c7d"


def _set_version(text: str, name: str, old: str, new: str) -> str:
    header = f'[[package]]\nname = "{name}"\nversion = "{old}"\n'
    assert text.count(header) == 1, name
    return text.replace(header, f'[[package]]\nname = "{name}"\nversion = "{new}"\n')


def _drop_package(text: str, name: str) -> str:
    start = text.index(f'\n[[package]]\nname = "{name}"\n')
    end = text.index("\n[[package]]\n", start + 1)
    return text[:start] + text[end:]


def modified_lock(base: str) -> str:
    """BASE with a major, minor, patch, post-release and local change, a downgrade, a package
    added, one removed and a git source moved to another revision."""
    head = _set_version(base, "accelerate", "1.14.0", "2.0.0")
    head = _set_version(head, "einops", "0.8.2", "0.9.0")
    head = _set_version(head, "deprecation", "2.1.0", "2.1.1")
    head = _set_version(head, "causal-conv1d", "1.6.2.post1", "1.6.2.post2")
    head = _set_version(head, "awkward", "2.13.0", "2.12.3")
    head = head.replace(OLD_REV, NEW_REV)
    head = _drop_package(head, "defusedxml")
    return head + (
        '\n[[package]]\nname = "humanize"\nversion = "4.12.3"\n'
        'source = { registry = "https://index.example.invalid/simple" }\n'
    )


GOLDEN = """\
**uv.lock**: 6 changed, 1 added, 1 removed, 1 downgraded

| Package | Change | From | To | Source |
|---|---|---|---|---|
| `accelerate` | **major** | `1.14.0` | `2.0.0` | registry |
| `awkward` | :warning: **downgrade** (minor) | `2.13.0` | `2.12.3` | registry |
| `causal-conv1d` | post-release | `1.6.2.post1` | `1.6.2.post2` | registry |
| `deep-gemm` | source | `2.5.0+local` | `2.5.0+local` | git `https://github.com/deepseek-ai/DeepGEMM.git` `714dd1a4a980` → `0f5c2f4e1d3b` |
| `deprecation` | patch | `2.1.0` | `2.1.1` | registry |
| `einops` | minor | `0.8.2` | `0.9.0` | registry |
| `humanize` | added | - | `4.12.3` | registry |
| `defusedxml` | removed | `0.7.1` | - | registry |
"""


@pytest.fixture(scope="module")
def lock_pair() -> tuple[str, str]:
    base = MEGATRON_LOCK.read_text()
    return base, modified_lock(base)


def test_golden_table_on_the_megatron_lock(lock_pair: tuple[str, str]) -> None:
    base, head = lock_pair
    assert markdown.render(lockfile.diff_locks(base, head)) == GOLDEN


def test_github_renders_it_as_one_table(lock_pair: tuple[str, str]) -> None:
    rows = gfm.table_rows(markdown.render(lockfile.diff_locks(*lock_pair)))
    assert rows[0] == list(markdown.HEADER)
    assert [row[0] for row in rows[1:]] == [
        f"`{name}`"
        for name in (
            "accelerate",
            "awkward",
            "causal-conv1d",
            "deep-gemm",
            "deprecation",
            "einops",
            "humanize",
            "defusedxml",
        )
    ]
    assert {len(row) for row in rows} == {5}


def test_no_change_says_so(lock_pair: tuple[str, str]) -> None:
    base = lock_pair[0]
    assert "no package changes" in markdown.render(lockfile.diff_locks(base, base))


@pytest.mark.parametrize(
    ("before", "after", "kind", "downgrade"),
    [
        ("1.2.3", "2.0.0", "major", False),
        ("1.2.3", "1.3.0", "minor", False),
        ("2.1", "2.1.1", "patch", False),
        ("2.5.0", "2.4.9", "minor", True),
        ("2.6.0+cu124", "2.6.0+cu126", "local", False),
        ("2.6.0+cu126", "2.6.0+cu124", "local", True),
        ("1.0.0rc1", "1.0.0", "pre-release", False),
        ("1.0.0", "1.0.0rc1", "pre-release", True),
        ("1.0.dev3", "1.0.dev4", "pre-release", False),
        ("2024-05-01", "2024-06-01", "changed", False),  # not PEP 440: no crash, no guess
        ("(dynamic)", "1.0", "changed", False),
        ("1.0 (git https://g/x.git@aaaa)", "1.0 (git https://g/x.git@bbbb)", "source", False),
    ],
)
def test_change_kinds(before: str, after: str, kind: str, downgrade: bool) -> None:
    assert classify(before, after) == (kind, downgrade)


def test_described_entries_parse_back() -> None:
    assert Described.parse("1.0") == ("1.0", "")
    assert Described.parse("1.0 (git https://g/x.git@ab12)") == ("1.0", "git https://g/x.git@ab12")
    assert Described.parse("(dynamic) (editable .)") == ("(dynamic)", "editable .")


def test_a_pipe_in_a_cell_is_escaped() -> None:
    diff = lockfile.LockDiff(added=[lockfile.Added("odd", ("1.0 (path a|b)",))])
    text = markdown.render(diff)
    assert "path `a\\|b`" in text
    assert gfm.table_rows(text)[1][4] == "path `a|b`"  # one cell, the pipe shown


def _code_spans(text: str) -> list[str]:
    """The text of every inline code span markdown-it renders in `text`."""
    return [
        child.content
        for token in gfm.tokens(text)
        if token.type == "inline"
        for child in token.children or []
        if child.type == "code_inline"
    ]


@pytest.mark.parametrize(
    "name",
    ["x`<img src=x>`y", "`start", "end`", "a``b", "[link](https://evil.example/)`"],
)
def test_lock_text_cannot_end_its_code_span(name: str) -> None:
    """uv.lock is repository text: a backtick in a name, version or URL stays inside its code
    span, so a lock cannot put links, images or HTML into a PR comment or body."""
    version = f"1.0{name}"
    diff = lockfile.LockDiff(
        added=[lockfile.Added(name, (f"{version} (git https://g/{name}@ab12)",))]
    )
    text = markdown.render(diff)
    spans = _code_spans(text)
    assert name in spans
    assert version in spans
    assert f"https://g/{name}" in spans
    html = gfm._PARSER.render(text)
    assert "<img" not in html and "<a " not in html
