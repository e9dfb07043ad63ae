"""textlines: lines with offsets and endings, the exact read, the YAML key pattern."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uvdock.files import textlines
from uvdock.files.textlines import Line

TEXTS = (
    "# h\r\n\r\ntqdm==4.67.3\r\n",
    "a==1",
    "a==1\n",
    "",
    "\n\n",
    "a==1\r\nb==2\n",
    "x\r",
    "\r\n",
)


@pytest.mark.parametrize("text", TEXTS)
def test_split_and_join_keep_every_byte(text: str) -> None:
    lines = textlines.split_lines(text)
    assert textlines.join_lines(lines) == text
    assert "".join(line.text for line in lines) == text


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", []),
        ("a", [Line(1, 0, "a", "")]),
        ("a\n", [Line(1, 0, "a", "\n")]),
        ("a\r\nb", [Line(1, 0, "a", "\r\n"), Line(2, 3, "b", "")]),
        ("\n\r\n", [Line(1, 0, "", "\n"), Line(2, 1, "", "\r\n")]),
        ("a\rb\n", [Line(1, 0, "a\rb", "\n")]),  # a lone CR is content, as git grep sees it
    ],
)
def test_lines_know_number_offset_and_ending(text: str, lines: list[Line]) -> None:
    assert textlines.split_lines(text) == lines


@given(st.text(alphabet="ab \r\n\t#:"))
def test_lines_are_the_lf_split_of_the_text(text: str) -> None:
    lines = textlines.split_lines(text)
    assert textlines.join_lines(lines) == text
    for line in lines:
        assert text[line.offset : line.offset + len(line.text)] == line.text
        assert "\n" not in line.content and line.ending in ("\n", "\r\n", "")
        assert line.number == text.count("\n", 0, line.offset) + 1
    assert len(lines) == text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def test_read_text_keeps_crlf_and_missing_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a\r\nb")
    assert textlines.read_text(path) == "a\r\nb"
    path.write_bytes(b"\xff")
    with pytest.raises(UnicodeDecodeError):
        textlines.read_text(path)


@pytest.mark.parametrize(
    ("line", "parts"),
    [
        ("key: value", ("", None, "key", "value")),
        ("  - IMAGE: x  # c", ("  ", "- ", "IMAGE", "x  # c")),
        ('    "quoted key" : v', ("    ", None, '"quoted key"', "v")),
        ("'a.b/c': ", ("", None, "'a.b/c'", "")),
        ("- test_case: [a, b]", ("", "- ", "test_case", "[a, b]")),
        ("key:value", None),  # no blank after the colon: a plain scalar, not a key
        ("- just a scalar", None),
        ("http://host: x", None),
    ],
)
def test_yaml_key_line(line: str, parts: tuple[str, str | None, str, str] | None) -> None:
    match = textlines.YAML_KEY_LINE.fullmatch(line)
    found = None if match is None else (match["indent"], match["dash"], match["key"], match["rest"])
    assert found == parts


@pytest.mark.parametrize(
    ("text", "value"),
    [("'a'", "a"), ('"a b"', "a b"), ("  a  ", "a"), ("'", "'"), ("'a\"", "'a\""), ("''", "")],
)
def test_unquote(text: str, value: str) -> None:
    assert textlines.unquote(text) == value
