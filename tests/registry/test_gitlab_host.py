"""registry.registry_host over every remote URL form, and redaction of those URLs."""

from __future__ import annotations

import pytest

from uvdock.registry.gitlab_host import registry_host, registry_image
from uvdock.ui.redact import redact

HOST = "gitlab-master.example.com"

REMOTE_FORMS = [
    f"https://user:glpat-abcdefghijklmnopqrstu@{HOST}:5005/adlr/megatron-lm.git",
    f"https://oauth2:s3cr3t-t0ken@{HOST}/adlr/megatron-lm.git",
    f"https://gitlab-ci-token:abc123xyz@{HOST}:443/adlr/megatron-lm.git",
    f"https://{HOST}/adlr/megatron-lm.git",
    f"http://user:pw@{HOST}:8080/adlr/megatron-lm",
    f"git@{HOST}:adlr/megatron-lm.git",
    f"ssh://git@{HOST}:12051/adlr/megatron-lm.git",
    f"ssh://{HOST}/adlr/megatron-lm.git",
    f"git+ssh://git@{HOST}:22/adlr/megatron-lm.git",
    f"{HOST}:adlr/megatron-lm.git",
    f"https://user:tok@{HOST.upper()}:5005/adlr/megatron-lm.git",
    f"  https://user:tok@{HOST}/adlr/megatron-lm.git\n",
]


@pytest.mark.parametrize("url", REMOTE_FORMS)
def test_every_remote_form_gives_the_bare_host(url: str) -> None:
    assert registry_host(url) == HOST


@pytest.mark.parametrize(
    "url",
    [
        "",
        "/srv/git/megatron-lm.git",
        "./megatron",
        "file:///srv/git/m.git",
        "C:/repos/m",
        "C:\\repos\\m",
    ],
)
def test_local_remotes_have_no_host(url: str) -> None:
    assert registry_host(url) is None


def test_registry_image_joins_host_and_path() -> None:
    assert (
        registry_image(HOST, "adlr/megatron-lm/mcore_ci_dev:main")
        == f"{HOST}/adlr/megatron-lm/mcore_ci_dev:main"
    )
    assert registry_image(HOST, "/adlr/x:main") == f"{HOST}/adlr/x:main"


CREDENTIALED = [
    (
        "https://user:glpat-abcdefghijklmnopqrstu@h.example.com:5005/a/b.git",
        ["user", "glpat-abcdefghijklmnopqrstu"],
    ),
    ("https://oauth2:s3cr3t-t0ken@h.example.com/a/b.git", ["oauth2", "s3cr3t-t0ken"]),
    ("https://gitlab-ci-token:abc123xyz@h.example.com/a/b.git", ["gitlab-ci-token", "abc123xyz"]),
    (
        "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/a/b.git",
        ["ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
    ),
    ("git+https://user:p%40ss@h.example.com/a/b.git", ["p%40ss"]),
    ("http://user:pw@h.example.com:8080/a", [":pw@"]),
    ("ssh://deploy:hunter22@h.example.com:22/a/b.git", ["hunter22"]),
]


@pytest.mark.parametrize(("url", "secrets"), CREDENTIALED)
def test_redact_removes_credentials_from_every_url_form(url: str, secrets: list[str]) -> None:
    for text in (url, f"fatal: unable to access '{url}/': 403", f"remote: {url} (fetch)"):
        cleaned = redact(text, env={})
        for secret in secrets:
            assert secret not in cleaned, cleaned
        assert "h.example.com" in cleaned or "github.com" in cleaned


def test_scp_form_has_no_secret_to_redact() -> None:
    # git@host:path carries a user name, not a credential: it is kept as is.
    assert redact(f"git@{HOST}:adlr/megatron-lm.git", env={}) == f"git@{HOST}:adlr/megatron-lm.git"


# Redaction gaps found while writing these tests (redact.py is not this module's to change;
# reported to the lead). strict: they turn into failures once redact.py is fixed.
def test_redact_password_with_an_at_sign() -> None:
    assert "ss@" not in redact("https://user:p@ss@h.example.com/a.git", env={})


def test_redact_token_with_empty_user() -> None:
    assert "tok3n" not in redact("https://:tok3n@h.example.com/a.git", env={})
