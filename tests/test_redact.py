from __future__ import annotations

import pytest

from uvdock.redact import MASK, redact, strip_credentials


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "https://oauth2:glpat-abcdefghijklmnopqrstu@gitlab.example.com:5005/adlr/mlm.git",
            "glpat-abcdefghijklmnopqrstu",
        ),
        ("git+https://user:hunter22@host/x.git", "hunter22"),
        (
            "docker build --build-arg GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123 .",
            "ghp_abcdefghijklmnopqrstuvwxyz0123",
        ),
        ("JET_PASSWORD=s3cr3tvalue make", "s3cr3tvalue"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123 leaked", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
    ],
)
def test_secrets_are_masked(text: str, secret: str) -> None:
    cleaned = redact(text, env={})
    assert secret not in cleaned
    assert MASK in cleaned


def test_values_of_token_like_variables_are_masked_anywhere() -> None:
    env = {"RO_API_TOKEN": "abc123xyz", "HOME": "/root"}
    assert (
        redact("machine gitlab login me password abc123xyz", env=env)
        == "machine gitlab login me password ***"
    )
    assert redact("/root/.cache/uv", env=env) == "/root/.cache/uv"


def test_plain_text_and_scp_remotes_are_left_alone() -> None:
    assert (
        redact("git@gitlab.example.com:adlr/megatron-lm.git", env={})
        == "git@gitlab.example.com:adlr/megatron-lm.git"
    )
    assert redact("uv sync --locked --extra dev", env={}) == "uv sync --locked --extra dev"


def test_strip_credentials() -> None:
    assert strip_credentials("https://u:p@host:5005/x.git") == "https://host:5005/x.git"
