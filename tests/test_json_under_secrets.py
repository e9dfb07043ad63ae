"""Every --json output parses, and says the same, under an environment full of secret-like
variables with ordinary values; real secrets in that environment are still masked.

Issue 11: FEATURE_AUTH_ENABLED=true turned `"ok": true` into `"ok": ***`, SOME_TOKEN=line
masked every `"line":` key. JSON is now redacted as data, then serialized.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import RunCli, commit_all
from samples.oci_registry import Registries

# Secret-like names holding the words, keys and values that uvdock's JSON is made of.
ORDINARY = {
    "FEATURE_AUTH_ENABLED": "true",
    "SOME_TOKEN": "line",
    "GIT_AUTHOR_NAME": "managed",
    "CI_JOB_TOKEN_FLAG": "docker",
    "MY_SECRET": "false",
    "API_KEY": "path",
    "DB_PASSWORD": "lts",
    "PASSWD": "dev",
    "OTHER_TOKEN": "null",
    "RETRY_TOKEN": "1",
    "NUMERIC_SECRET": "12345",
    "LANE_SECRET": "tag",
    "PINS_TOKEN": "pins",
    "AUTHOR": "okoenig",
    "AUTHORITY": "nvidia",
    "HF_TOKEN_PATH": "/root/.cache/huggingface/token",
    "REGISTRY_AUTH_FILE": "/nonexistent/auth.json",
    "ACCESS_KEY": "26.06-py3",
    "PRIVATE_KEY": "uv.lock",
    "CREDENTIALS": "conflict",
    "SESSION_TOKEN": "einops",
}
# Real secrets: long and random; the log given to `doctor` carries them.
REAL = {
    "HF_TOKEN": "hf_Zq8xLp3vN7rT2kW9yB4mQ6cJ1dF5gH0s",
    "JET_PASSWORD": "Xk29-Qw81-Lm44-Zp07",
    "RO_API_TOKEN": "glpat-9fK2mQ7xL4vB8nZ1cR6t",
}

READ_ONLY = [
    ("image", "show"),
    ("image", "check"),
    ("lts", "show"),
    ("lts", "check"),
    ("lts", "drift"),
    ("lts", "drift", "--all"),
    ("recipe", "show", "gpt_16b_perf"),
    ("lock", "diff", "HEAD"),
    ("lock", "resolve"),
    ("--engine", "local", "doctor"),
    ("--dry-run", "image", "bump", "26.08-py3", "--offline"),
    ("--dry-run", "image", "bump", "26.08-py3", "--offline", "--lts"),
    ("--dry-run", "lts", "pin", "einops==0.8.10", "--lts"),
    ("--dry-run", "recipe", "mark-broken", "gpt_16b_perf", "--issue", "5", "--reason", "hangs"),
    ("--dry-run", "merge-driver", "install"),
    ("--dry-run", "merge-driver", "install", "--pyproject"),
]


def _json(run_cli: RunCli, repo: Path, args: tuple[str, ...]) -> object:
    result = run_cli("--repo", repo, "--json", *args)
    assert result.code in (0, 1), (args, result.err)
    # doctor's free-space figure and each check's time move between two runs.
    text = re.sub(r"[0-9.]+ GB free", "N GB free", result.out)
    return json.loads(re.sub(r'"seconds": [0-9.e-]+', '"seconds": 0', text))


@pytest.mark.parametrize("args", READ_ONLY, ids=" ".join)
def test_json_parses_and_is_unchanged_under_secret_like_variables(
    megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    # `--engine local doctor` runs the host's `uv lock --check`, whose index is
    # index.example.invalid: offline, uv fails at once instead of after its DNS retries.
    monkeypatch.setenv("UV_OFFLINE", "1")
    plain = _json(run_cli, megatron_repo, args)
    for name, value in {**ORDINARY, **REAL}.items():
        monkeypatch.setenv(name, value)
    assert _json(run_cli, megatron_repo, args) == plain


def test_recipe_unmark_json_under_secret_like_variables(
    megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    marked = run_cli(
        "--repo",
        megatron_repo,
        "recipe",
        "mark-broken",
        "gpt_16b_perf",
        "--issue",
        "5",
        "--reason",
        "x",
    )
    assert marked.code == 0, marked.err
    commit_all(megatron_repo, "mark")
    args = ("--dry-run", "recipe", "unmark", "gpt_16b_perf")
    plain = _json(run_cli, megatron_repo, args)
    for name, value in ORDINARY.items():
        monkeypatch.setenv(name, value)
    assert _json(run_cli, megatron_repo, args) == plain


def test_doctor_log_json_masks_real_secrets_and_keeps_ordinary_words(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "job.log"
    log.write_text(
        f"+ huggingface-cli login --token {REAL['HF_TOKEN']}\n"
        f"fatal: unable to access 'https://oauth2:{REAL['RO_API_TOKEN']}@gitlab.example.com/a.git/'\n"
        f"ERROR: login as jet with {REAL['JET_PASSWORD']} failed: managed line docker lts\n"
        "Error response from daemon: denied: access forbidden\n"
    )
    plain = json.loads(run_cli("--json", "doctor", log).out)
    for name, value in {**ORDINARY, **REAL}.items():
        monkeypatch.setenv(name, value)
    result = run_cli("--json", "doctor", log)
    payload = json.loads(result.out)
    for secret in REAL.values():
        assert secret not in result.out + result.err
    assert payload.keys() == plain.keys()
    assert [f["signature"] for f in payload["findings"]] == [
        f["signature"] for f in plain["findings"]
    ]
    unknown = tmp_path / "unknown.log"
    unknown.write_text(log.read_text().rsplit("Error response", 1)[0])
    lines = json.loads(run_cli("--json", "doctor", unknown).out)["error_lines"]
    assert lines[-1]["line"] == "ERROR: login as jet with *** failed: managed line docker lts"


@pytest.mark.engine
@pytest.mark.parametrize(
    "args",
    [("image", "tags"), ("image", "tags", "--lts"), ("--dry-run", "image", "bump", "--latest")],
    ids=" ".join,
)
def test_registry_json_under_secret_like_variables(
    megatron_repo: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    registries: Registries,
    tmp_path: Path,
    args: tuple[str, ...],
) -> None:
    for name in ("REGISTRY_AUTH_FILE", "DOCKER_CONFIG", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("UVDOCK_REGISTRY", registries.open_url)
    plain = _json(run_cli, megatron_repo, args)
    for name, value in {**ORDINARY, **REAL}.items():
        if name != "REGISTRY_AUTH_FILE":
            monkeypatch.setenv(name, value)
    assert _json(run_cli, megatron_repo, args) == plain
