"""Issue 29: one rule for credentials in URLs, wherever uvdock is given a URL to use or write.

`uvdock add`, `lts pin` and the registry URL each had their own test for userinfo; a password
hidden behind an ssh account name (`ssh://git@x:secret@host`) passed `add`'s. One function,
ui.redact.url_credentials, now decides for all three.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import RunCli

from uvdock.ui.redact import url_credentials

SECRET = "hunter2-secret"


@pytest.mark.parametrize(
    "url,carries",
    [
        (f"git+ssh://git@x:{SECRET}@host/o/r.git", True),  # the userinfo ends at the last @
        (f"https://{SECRET}@github.com/o/r.zip", True),  # a token as the user name
        (f"git+https://oauth2:{SECRET}@gitlab.example/o/r.git", True),
        (f"ssh://user:{SECRET}@host/r.git", True),
        ("git+ssh://git@github.com/o/r.git@v1", False),  # an account, and a ref in the path
        ("git+https://github.com/o/r.git@v0.3.0", False),
        ("https://host/path?q=a@b", False),  # an @ after the authority is no userinfo
        ("https://host#a:b@c", False),
        ("not a url", False),
    ],
)
def test_the_one_rule(url: str, carries: bool) -> None:
    assert url_credentials(url) is carries


def test_add_refuses_a_password_behind_an_ssh_account(run_cli: RunCli, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    spec = f"demo @ git+ssh://git@x:{SECRET}@host/o/r.git"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "d"\nversion = "0"\n')
    result = run_cli("--repo", repo, "--dry-run", "--engine", "local", "add", spec)
    assert result.code == 2, result.out + result.err
    assert "credentials" in result.err
    assert SECRET not in result.out + result.err


def test_lts_pin_keeps_an_ssh_account_and_refuses_a_password(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    pin = ("--repo", megatron_repo, "--dry-run", "lts", "pin", "--lts", "--add")
    ok = run_cli(*pin, "demo @ git+ssh://git@github.com/o/r.git@v1")
    assert ok.code == 0, ok.err
    refused = run_cli(*pin, f"demo @ git+ssh://git:{SECRET}@github.com/o/r.git@v1")
    assert refused.code == 2 and "credentials" in refused.err
    assert SECRET not in refused.out + refused.err


def test_a_registry_url_with_any_userinfo_is_refused(
    megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UVDOCK_REGISTRY", f"https://ci-bot:{SECRET}@registry.example")
    result = run_cli("--repo", megatron_repo, "image", "tags")
    assert result.code == 2 and "credentials" in result.err
    assert SECRET not in result.out + result.err
