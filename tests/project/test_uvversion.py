from __future__ import annotations

from uvdock.project import uvversion


def test_parse() -> None:
    assert uvversion.parse("uv 0.7.2 (x86_64-unknown-linux-gnu)") == "0.7.2"
    assert uvversion.parse("bash: uv: command not found") is None


def test_mismatches() -> None:
    assert uvversion.mismatches("0.7.2", "==0.7.2", "0.7.2") == []
    problems = uvversion.mismatches("0.7.2", ">=0.8", "0.13.9")
    assert len(problems) == 2
    assert "required-version >=0.8" in problems[0]
    assert "host's uv is 0.13.9" in problems[1]
    assert "not a valid specifier" in uvversion.mismatches("0.7.2", ">=banana", None)[0]
