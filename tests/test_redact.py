from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from conftest import RunCli

from uvdock.ui.redact import MASK, redact


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


SECRET = "s3cr3tValue-9fK2mQ7x"


@pytest.mark.parametrize(
    "placement",
    [("--engine", "local"), ("--engine", "podman", "--image", "img"), ("--container", "c1")],
)
def test_dry_run_command_hides_credential_arguments(
    run_cli: RunCli, megatron_repo: Path, placement: tuple[str, ...]
) -> None:
    result = run_cli(
        "--repo", megatron_repo, "--dry-run", *placement, "run", "--",
        "curl", "-H", f"Authorization: Bearer {SECRET}", "-H", f"PRIVATE-TOKEN: {SECRET}",
        "--password", SECRET, "-u", f"ci:{SECRET}", f"https://ci:{SECRET}@gitlab.example.com/x",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert SECRET not in result.out + result.err
    assert (
        "curl -H 'Authorization: Bearer ***' -H 'PRIVATE-TOKEN: ***' --password '***' "
        "-u 'ci:***' 'https://***@gitlab.example.com/x'"
    ) in result.out


def test_crash_log_holds_no_secret(
    run_cli: RunCli, megatron_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uvdock.commands.image import show as image_show

    def crash(*_: object) -> int:
        raise RuntimeError(f"boom at https://oauth2:{SECRET}@gitlab.example.com/a.git")

    # Fault injection: the bug being simulated is any uncaught exception in a command.
    monkeypatch.setattr(image_show.Command, "run", crash)
    argv = ["--repo", str(megatron_repo), "image", "show"]
    # The crash log records the process's command line, as a shell would have passed it.
    monkeypatch.setattr(sys, "argv", ["uvdock", *argv, f"HF_TOKEN={SECRET}", "--password", SECRET])
    result = run_cli(*argv)
    assert result.code == 4
    assert SECRET not in result.err
    log = Path(re.search(r"traceback in (\S+)\)", result.err)[1])  # type: ignore[index]
    text = log.read_text()
    log.unlink()
    assert SECRET not in text
    assert "image show 'HF_TOKEN=***' --password '***'" in text.splitlines()[0]
    assert "RuntimeError: boom at https://***@gitlab.example.com/a.git" in text
