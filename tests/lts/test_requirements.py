"""Parsing and checking the LTS pin set (uvdock.lts.requirements)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MEGATRON_LM
from hypothesis import given, settings
from hypothesis import strategies as st

from uvdock.errors import EnvironmentUnusable
from uvdock.lts import requirements as lts

REAL = MEGATRON_LM / "docker" / "lts" / "requirements.txt"

VARIANTS = (
    "# header\r\n"
    "\r\n"
    "tqdm==4.67.3\r\n"
    "Einops[Torch, numpy]==0.8.2   # aligned comment\r\n"
    'numpy==1.26.4 ; python_version < "3.12"  # marker\r\n'
    "wheel @ https://files.example.invalid/wheel-0.1-py3-none-any.whl#sha256=abc\r\n"
    "hashed==1.0 \\\r\n"
    "    --hash=sha256:aaaa \\\r\n"
    "    --hash=sha256:bbbb\r\n"
    "inline==2.0 --hash=sha256:cccc\r\n"
    "emerging_optimizers @ git+https://github.com/x/y.git@v0.2.0 ; sys_platform == 'linux'"
)


def test_real_file_parses_into_fifteen_exact_pins() -> None:
    parsed = lts.parse(REAL.read_text())
    assert [p.line for p in parsed.pins] == list(range(10, 25))
    assert parsed.problems == []
    assert lts.check(parsed) == []
    energon = parsed.find("megatron-energon")[0]
    assert (energon.version, energon.extras) == ("7.3.2", ("av_decode",))
    assert energon.comment == "# was: megatron-energon[av_decode]~=6.0.1"
    optimizers = parsed.find("emerging-optimizers")[0]
    assert optimizers.name == "emerging_optimizers"
    assert optimizers.url == "git+https://github.com/NVIDIA-NeMo/Emerging-Optimizers.git@v0.2.0"
    assert optimizers.version is None


def test_line_endings_and_final_newline_are_seen() -> None:
    parsed = lts.parse(VARIANTS)
    assert parsed.line_ending == "\r\n"
    assert parsed.lines[-1].ending == ""
    assert lts.parse("a==1").line_ending == "\n"


def test_variants_parse_with_markers_hashes_extras_urls() -> None:
    parsed = lts.parse(VARIANTS)
    assert parsed.problems == []
    by_key = {p.key: p for p in parsed.pins}
    assert by_key["einops"].name == "Einops"
    assert by_key["einops"].extras == ("Torch", "numpy")  # as the file spells them
    assert by_key["einops"].comment == "# aligned comment"
    assert by_key["numpy"].marker == 'python_version < "3.12"'
    assert by_key["numpy"].version == "1.26.4"
    assert by_key["wheel"].url is not None and by_key["wheel"].url.endswith("#sha256=abc")
    assert by_key["wheel"].comment == ""  # a "#" inside a URL is not a comment
    hashed = by_key["hashed"]
    assert hashed.line == 7
    assert hashed.hashes == ("sha256:aaaa", "sha256:bbbb")
    assert by_key["inline"].hashes == ("sha256:cccc",)
    assert by_key["emerging-optimizers"].marker == 'sys_platform == "linux"'
    assert lts.check(parsed) == []


def test_cut_line_finds_requirement_gap_and_tail() -> None:
    parts = lts.cut_line("einops==0.8.2      # was: einops~=0.8")
    assert (parts.requirement, parts.gap, parts.tail) == (
        "einops==0.8.2",
        "      ",
        "# was: einops~=0.8",
    )
    assert len(parts.indent + parts.requirement + parts.gap) == 19
    parts = lts.cut_line("  hashed==1.0 \\")
    assert (parts.indent, parts.requirement, parts.tail) == ("  ", "hashed==1.0", "\\")
    parts = lts.cut_line("x @ https://h/x.whl#egg=x  # c")
    assert parts.requirement == "x @ https://h/x.whl#egg=x"


def test_check_reports_each_problem_with_its_line() -> None:
    text = (
        "tqdm==1.0\n"
        "einops>=0.8\n"
        "TQDM==2.0\n"
        "this is not a requirement\n"
        "--index-url https://example.invalid/simple\n"
        "wild==1.*\n"
        "bare\n"
    )
    problems = lts.check(lts.parse(text))
    assert [p.line for p in problems] == [2, 3, 4, 5, 6, 7]
    messages = {p.line: p.message for p in problems}
    assert "not an exact pin (>=0.8)" in messages[2]
    assert "already pinned on line 1" in messages[3]
    assert messages[4].startswith("cannot parse `this is not a requirement`")
    assert "\n" not in messages[4]
    assert "pip option" in messages[5]
    assert "not an exact pin (==1.*)" in messages[6]
    assert "no version" in messages[7]


def test_duplicates_are_found_by_normalized_name() -> None:
    problems = lts.check(lts.parse("Foo.Bar==1\nfoo_bar==1\nfoo-bar==1\n"))
    assert [p.line for p in problems] == [2, 3]


def test_load_refuses_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentUnusable) as info:
        lts.load(tmp_path / "nope.txt", "nope.txt")
    assert info.value.exit_code == 3
    assert "nope.txt" in info.value.message


def test_pin_json_has_the_documented_fields() -> None:
    pin = lts.parse("a[x]==1 ; python_version >= '3.10'  # why\n").pins[0]
    data = pin.as_json()
    assert {"name", "spec", "line"} <= set(data)
    assert data["spec"] == "a[x]==1 ; python_version >= '3.10'"
    assert data["extras"] == ["x"] and data["comment"] == "# why"


@settings(max_examples=150, deadline=None)  # sized to the suite budget (conftest.py)
@given(st.from_regex(lts._FAST, fullmatch=True))
def test_the_fast_path_reads_exactly_what_packaging_reads(text: str) -> None:
    assert lts.read_requirement(text) == lts.read_with_packaging(text)


@pytest.mark.parametrize(
    "text",
    [
        "tqdm==4.67.3",
        "megatron-energon[av_decode]==7.3.2",
        "flashinfer-python==0.6.11.post3",
        "a[X,y]==1.0rc1.post2.dev3",
        "emerging_optimizers @ git+https://github.com/NVIDIA-NeMo/Emerging-Optimizers.git@v0.2.0",
        "x @ https://files.example.invalid/x-1.0-py3-none-any.whl",
    ],
)
def test_the_fast_path_on_real_shapes(text: str) -> None:
    assert lts._FAST.fullmatch(text)
    assert lts.read_requirement(text) == lts.read_with_packaging(text)
