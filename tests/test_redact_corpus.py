"""Every credential form of issue 12 §4 masked, ordinary text kept, and the JSON rule.

Each MASKED row is one input line and exactly the line uvdock shows; each VISIBLE line is
shown unchanged. hypothesis checks that redacting JSON-able values keeps them JSON and that
redaction is stable (masking twice changes nothing).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RunCli
from hypothesis import given, settings
from hypothesis import strategies as st

from uvdock.ui.redact import MASK, Redactor, redact, secret_name

B64 = "dXNlcjpwYXNzd29yZEJhc2U2NA=="
GLPAT = "glpat-9fK2mQ7xL4vB8nZ1cR6t"
HF = "hf_Zq8xLp3vN7rT2kW9yB4mQ6cJ1dF5gH0s"

MASKED = [
    # 1-3 Authorization: Bearer | Basic | token
    ("curl -H 'Authorization: Bearer eyJhbGciOi.abc'", "curl -H 'Authorization: Bearer ***'"),
    (f"Authorization: Basic {B64}", "Authorization: Basic ***"),
    (f"http.extraheader=AUTHORIZATION: token {GLPAT}", "http.extraheader=AUTHORIZATION: token ***"),
    # 4-5 PRIVATE-TOKEN: / JOB-TOKEN: headers
    (f'curl --header "PRIVATE-TOKEN: {GLPAT}" https://x', 'curl --header "PRIVATE-TOKEN: ***" https://x'),
    ("JOB-TOKEN: 64_abcdEFGH1234", "JOB-TOKEN: ***"),
    ("error: JOB-TOKEN: 64_abcdEFGH1234", "error: JOB-TOKEN: ***"),
    # 6-7 netrc, inline and one entry per line
    (
        "machine gitlab-master.nvidia.com login okoenig password s3cr3tValue",
        "machine gitlab-master.nvidia.com login okoenig password ***",
    ),
    ("  password s3cr3tValue", "  password ***"),
    # 8 docker login -p
    ("docker login -u ci -p s3cr3tValue nvcr.io", "docker login -u ci -p *** nvcr.io"),
    # 9-10 --password X / --password=X
    ("skopeo copy --password s3cr3tValue a b", "skopeo copy --password *** a b"),
    ("skopeo copy --password=s3cr3tValue a b", "skopeo copy --password=*** a b"),
    # 11 docker config auth
    (f'{{"auths": {{"nvcr.io": {{"auth": "{B64}"}}}}}}', '{"auths": {"nvcr.io": {"auth": "***"}}}'),
    # 12 CI_JOB_TOKEN: X
    ("  CI_JOB_TOKEN: 64_abcdEFGH1234", "  CI_JOB_TOKEN: ***"),
    # 13-15 export HF_TOKEN="X", HF_TOKEN='X', HF_TOKEN = X
    (f'export HF_TOKEN="{HF}"', 'export HF_TOKEN="***"'),
    ("HF_TOKEN='abcd1234efgh'", "HF_TOKEN='***'"),
    ("HF_TOKEN = abcd1234efgh", "HF_TOKEN = ***"),
    # 16-17 JSON and Python-repr environment dumps
    ('{"HF_TOKEN": "x", "HOME": "/root"}', '{"HF_TOKEN": "***", "HOME": "/root"}'),
    ("environ({'HF_TOKEN': 'x', 'HOME': '/root'})", "environ({'HF_TOKEN': '***', 'HOME': '/root'})"),
    # 18 bare hf_ tokens (and other vendors' shapes)
    (f"using token {HF} for the hub", "using token *** for the hub"),
    (f"remote: {GLPAT} rejected", "remote: *** rejected"),
    # 19 aws_secret_access_key = X
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = ***",
    ),
    # 20-22 bare secret= / password= / password:
    ("secret=hunter22", "secret=***"),
    ("password=hunter22", "password=***"),
    ("password: hunter22", "password: ***"),
    # 23 Cookie: session values
    ("Cookie: _gitlab_session=0f9a8b7c6d5e; theme=dark", "Cookie: _gitlab_session=***; theme=***"),
    # 24 URL passwords holding /
    ("https://ci:pa/ss@gitlab.example.com/a.git", "https://***@gitlab.example.com/a.git"),
    # 25 scp-style user:token@host:path
    (
        f"oauth2:{GLPAT}@gitlab.example.com:adlr/megatron-lm.git",
        "oauth2:***@gitlab.example.com:adlr/megatron-lm.git",
    ),
    # also: URL userinfo forms, curl -u, secret-named option
    ("https://user:p@ss@h.example.com/a.git", "https://***@h.example.com/a.git"),
    ("git+https://u:tok3nvalue@h.example.com/r.git@v1.0", "git+https://***@h.example.com/r.git@v1.0"),
    ("curl -u ci:s3cr3tValue https://x", "curl -u ci:*** https://x"),
    ("huggingface-cli login --token abcd1234efgh", "huggingface-cli login --token ***"),
]  # fmt: skip

VISIBLE = [
    '"line": 56,',
    '"ok": true,',
    "managed",
    "/usr/local/bin/docker",
    "docker/.ngc_version.dev",
    "git@github.com:org/repo.git",
    "ssh://git@github.com/org/repo.git",
    "password-less login",
    "Authorization required",
    "HTTP 401: Authorization required for this registry",
    "Password for 'https://ci@gitlab.example.com':",
    "uvdock 0.4.0 (uv 0.13.9)",
    "nvcr.io/nvidia/pytorch:26.06-py3",
    'hash = "sha256:4f8a0e8c5d6b7a9f1e2d3c4b5a6978877665544332211000ffeeddccbbaa9988"',
    'sdist = { url = "https://files.pythonhosted.org/p/t/tokenizers-0.21.0.tar.gz" }',
    "tests/unit_tests/test_tokenizer.py::test_token_ids[3] PASSED",
    "FEATURE_AUTH_ENABLED=true",
    "GIT_AUTHOR_NAME=managed",
    "CI_JOB_TOKEN_FLAG=docker",
    "HF_TOKEN_PATH=/root/.cache/huggingface/token",
    "max_tokens=4096",
    "docker login --password-stdin nvcr.io",
    "docker run -u 1000:1000 img",
    "uv sync --locked --extra dev",
    "https://registry.npmjs.org/@scope/pkg",
    "https://x.example.com:443/@scope/pkg",
    "TokenError: unexpected end of input",
    'printf \'%s\\n\' "machine h login okoenig password $RO_API_TOKEN" >> "$HOME/.netrc"',
    "password: ${{ secrets.PASSWORD }}",
    "HF_TOKEN=",
]


@pytest.mark.parametrize(("line", "shown"), MASKED)
def test_credential_form_is_masked(line: str, shown: str) -> None:
    assert redact(line, env={}) == shown


@pytest.mark.parametrize("line", VISIBLE)
def test_ordinary_text_stays_visible(line: str) -> None:
    assert redact(line, env={}) == line


ENV = {
    "SOME_TOKEN": "line",
    "GIT_AUTHOR_NAME": "managed",
    "FEATURE_AUTH_ENABLED": "true",
    "CI_JOB_TOKEN_FLAG": "docker",
    "MY_PASSWORD": "pass",
    "ACCESS_KEY": "26.06-py3",
    "HF_TOKEN_PATH": "/root/.cache/huggingface/token",
    "NAME_SECRET": "megatron",
    "RO_API_TOKEN": GLPAT,
    "JET_PASSWORD": "Xk29-Qw81-Lm44-Zp07",
}


def test_environment_values_masked_only_when_they_look_like_secrets() -> None:
    line = f"managed line docker pass 26.06-py3 megatron /root/.cache/huggingface/token {GLPAT}"
    assert redact(line + " Xk29-Qw81-Lm44-Zp07", env=ENV) == line.replace(GLPAT, MASK) + " ***"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("HF_TOKEN", True),
        ("RO_API_TOKEN", True),
        ("aws_secret_access_key", True),
        ("apiKey", True),
        ("PRIVATE-TOKEN", True),
        ("NPM_AUTH", True),
        ("auth", True),
        ("identitytoken", True),
        ("AUTHOR", False),
        ("GIT_AUTHOR_NAME", False),
        ("FEATURE_AUTH_ENABLED", False),
        ("AUTHORITY", False),
        ("REGISTRY_AUTH_FILE", False),
        ("CI_JOB_TOKEN_FLAG", False),
        ("password-less", False),
        ("--password-stdin", False),
        ("tokenizers", False),
    ],
)
def test_secret_names_are_whole_words(name: str, secret: bool) -> None:
    assert secret_name(name) is secret


def test_command_words_are_masked_whole() -> None:
    argv = ["curl", "-H", "Authorization: Bearer a b", "-H", "Cookie: sid=abcdefgh12"]
    argv += ["--password", "hunter22", "-e", "HF_TOKEN=a b c", "docker", "login", "-p", "pw"]
    assert Redactor({}).argv(argv) == [
        "curl", "-H", "Authorization: Bearer ***", "-H", "Cookie: sid=***",
        "--password", MASK, "-e", "HF_TOKEN=***", "docker", "login", "-p", MASK,
    ]  # fmt: skip


def test_json_values_are_redacted_by_key_and_content() -> None:
    payload = {"ok": True, "line": 3, "env": {"HF_TOKEN": "short", "HOME": "/root"}}
    payload["remote"] = f"https://oauth2:{GLPAT}@gitlab.example.com/a.git"
    assert Redactor(ENV).value(payload) == {
        "ok": True,
        "line": 3,
        "env": {"HF_TOKEN": MASK, "HOME": "/root"},
        "remote": "https://***@gitlab.example.com/a.git",
    }


# Text built from the pieces credential forms are made of, so hypothesis reaches them.
PIECES = st.sampled_from(
    [
        "HF_TOKEN", "password", "Authorization", "Cookie", "login", "machine", "-p", "--token",
        "https://", "u:", "@", "h.example.com", ":", "=", " ", "'", '"', "\\", "\n", "; ",
        "Bearer ", "sid=", GLPAT, HF, "$X", MASK, "true", "12", "/", "-u ", "a:b", "error: ",
    ]
)  # fmt: skip
TEXT = st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=14).map("".join)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)  # sized to the suite budget (conftest.py)
@given(JSONISH)
def test_redacted_json_values_stay_json_and_redaction_is_stable(value: object) -> None:
    redactor = Redactor(ENV)
    once = redactor.value(value)
    assert json.loads(json.dumps(once)) == once
    assert redactor.value(once) == once


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_text_redaction_is_stable(text: str) -> None:
    redactor = Redactor(ENV)
    once = redactor.text(text)
    assert redactor.text(once) == once
    assert GLPAT not in once and HF not in once


def test_doctor_quotes_every_form_masked(run_cli: RunCli, tmp_path: Path) -> None:
    # Prefixed with `error: ` so doctor quotes them; a netrc `password X` line is one only
    # when it stands alone, so that row is left out here.
    rows = [(line, masked) for line, masked in MASKED if not line.startswith("  password")]
    log = tmp_path / "job.log"
    log.write_text("".join(f"error: {line}\n" for line, _ in rows))
    shown = run_cli("doctor", log)
    assert shown.code == 1
    quoted = [line.split(": ", 1)[1] for line in shown.out.splitlines()[1:]]
    assert quoted == [f"error: {masked}" for _, masked in rows]
    payload = json.loads(run_cli("--json", "doctor", log).out)
    assert [e["line"] for e in payload["error_lines"]] == quoted
