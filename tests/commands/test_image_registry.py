"""`image bump` and `image tags` against a real registry (CNCF distribution) on loopback.

The registry is Debian's docker-registry, started here with images pushed by podman; one
instance is open, the other wants bearer tokens from a token endpoint as nvcr.io does.
Skipped with the reason when docker-registry or podman is missing, unless
UVDOCK_REQUIRE_ENGINE=1.
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult
from samples.oci_registry import Registries, free_port
from samples.pins import snapshot

Run = Callable[..., CliResult]
SECRET = "s3cr3t-registry-password-4f9a"
BASIC = "Basic " + base64.b64encode(f"ci-bot:{SECRET}".encode()).decode()

pytestmark = pytest.mark.engine


def dev_pin(repo: Path) -> bytes:
    return (repo / "docker/.ngc_version.dev").read_bytes()


@pytest.mark.parametrize("auth", ["token", "open"])
def test_existing_tag_bumps(
    megatron_repo: Path,
    run_cli: Run,
    registry: Registries,
    auth: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if auth == "open":
        monkeypatch.setenv("UVDOCK_REGISTRY", registry.open_url)
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.09-py3")
    assert result.code == 0, result.err
    assert "registry: 26.09-py3 is published for linux/amd64, linux/arm64" in result.out
    assert dev_pin(megatron_repo) == b"nvcr.io/nvidia/pytorch:26.09-py3\n"
    # Anonymous bearer flow on the token registry, none on the open one.
    assert registry.token.seen == ([""] if auth == "token" else [])


def test_missing_tag_is_refused_with_the_nearest_tags(
    megatron_repo: Path, run_cli: Run, registry: Registries
) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.08-py3")
    assert result.code == 2
    assert "nvcr.io/nvidia/pytorch:26.08-py3 does not exist in the registry" in result.err
    assert "hint: nearest existing tags: 26.10-py3, 26.09-py3, 26.06-py3" in result.err
    assert snapshot(megatron_repo) == before


def test_dry_run_refuses_a_missing_tag_too(
    megatron_repo: Path, run_cli: Run, registry: Registries
) -> None:
    result = run_cli("--repo", megatron_repo, "--dry-run", "image", "bump", "26.08-py3")
    assert result.code == 2
    assert "+ARG" not in result.out


def test_single_platform_tag_is_refused_naming_what_it_has(
    megatron_repo: Path, run_cli: Run, registry: Registries
) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.10-py3")
    assert result.code == 2
    assert "26.10-py3 is not published for arm64: it has linux/amd64" in result.err
    assert snapshot(megatron_repo) == before


def test_latest_picks_the_newest_complete_tag_across_pages(
    megatron_repo: Path, run_cli: Run, registry: Registries, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UVDOCK_REGISTRY_PAGE_SIZE", "2")
    result = run_cli("--repo", megatron_repo, "-v", "--json", "image", "bump", "--latest")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert (payload["from"], payload["to"], payload["dry_run"]) == ("26.06-py3", "26.09-py3", False)
    assert payload["registry"]["platforms"] == ["linux/amd64", "linux/arm64"]
    assert "26.10-py3: skipped, not published for arm64" in result.err
    # 7 tags, 2 a page: the Link headers were followed to the end.
    assert result.err.count("/tags/list -> 200") == 4, result.err
    assert dev_pin(megatron_repo) == b"nvcr.io/nvidia/pytorch:26.09-py3\n"
    again = run_cli("--repo", megatron_repo, "image", "bump", "--latest")
    assert again.code == 0, again.err
    assert "dev pins are already at 26.09-py3: nothing to change" in again.out


def test_latest_never_downgrades(megatron_repo: Path, run_cli: Run, registry: Registries) -> None:
    newer = run_cli("--repo", megatron_repo, "image", "bump", "27.01-py3", "--offline")
    assert newer.code == 0, newer.err
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", "--latest")
    assert result.code == 0, result.err
    assert "dev pins are current: 27.01-py3 is newer than 26.09-py3; nothing to change" in (
        result.out
    )
    assert snapshot(megatron_repo) == before


def test_image_tags_newest_first_with_each_lanes_pin(
    megatron_repo: Path, run_cli: Run, registry: Registries, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UVDOCK_REGISTRY_PAGE_SIZE", "3")
    result = run_cli("--repo", megatron_repo, "--json", "image", "tags", "--lts")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert [row["tag"] for row in payload["tags"]] == [
        "26.10-py3", "26.09-py3", "26.06-py3", "25.11-py3", "24.12-py3",
    ]  # fmt: skip
    assert payload["tags"][2] == {"tag": "26.06-py3", "pinned_by": ["dev"]}
    assert payload["pins"] == {"dev": "26.06-py3", "lts": "25.09-py3"}
    assert "the lts pin 25.09-py3 is not among the registry's tags" in result.err
    limited = run_cli("--repo", megatron_repo, "image", "tags", "--limit", "3")
    assert limited.code == 0, limited.err
    assert "26.06-py3 │ dev pin" in limited.out and "25.11-py3" not in limited.out
    assert "lts" not in limited.err  # the LTS lane is looked at only with --lts


def test_registry_down_is_exit_3_with_the_offline_hint(
    megatron_repo: Path, run_cli: Run, registry: Registries, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UVDOCK_REGISTRY", f"http://127.0.0.1:{free_port()}")
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.09-py3")
    assert result.code == 3
    assert "registry: cannot reach http://127.0.0.1:" in result.err
    assert "Connection refused" in result.err
    assert "hint: pass --offline" in result.err
    assert snapshot(megatron_repo) == before
    tags = run_cli("--repo", megatron_repo, "image", "tags")
    assert tags.code == 3


def test_offline_bumps_without_network_and_says_so(
    megatron_repo: Path, run_cli: Run, registry: Registries, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as silent:  # anything sent here would hang until the timeout
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        monkeypatch.setenv("UVDOCK_REGISTRY", f"http://127.0.0.1:{silent.getsockname()[1]}")
        flag = run_cli("--repo", megatron_repo, "--json", "image", "bump", "26.08-py3", "--offline")
        assert flag.code == 0, flag.err
        assert json.loads(flag.out)["registry"]["checked"] is False
        assert "not checked that 26.08-py3 exists in the registry: offline (--offline)" in flag.err
        (megatron_repo / "uvdock.toml").write_text("offline = true\n")
        config = run_cli("--repo", megatron_repo, "image", "bump", "26.11-py3")
        assert config.code == 0, config.err
        assert "offline (offline = true in the configuration" in config.out
        latest = run_cli("--repo", megatron_repo, "image", "bump", "--latest")
        assert latest.code == 2 and "offline mode is on" in latest.err
    assert dev_pin(megatron_repo) == b"nvcr.io/nvidia/pytorch:26.11-py3\n"
    assert registry.token.seen == []


def write_auth_file(path: Path, host: str, secret: str = SECRET) -> None:
    entry = base64.b64encode(f"ci-bot:{secret}".encode()).decode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"auths": {host: {"auth": entry}}}))


@pytest.mark.parametrize("where", ["REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "docker"])
def test_credentials_from_the_auth_file_reach_the_token_endpoint_and_nothing_else(
    megatron_repo: Path,
    run_cli: Run,
    registry: Registries,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    where: str,
) -> None:
    registry.token.reset(required=BASIC)  # a private repository: anonymous is refused
    host = registry.token_url.removeprefix("http://")
    denied = run_cli("--repo", megatron_repo, "image", "bump", "26.09-py3")
    assert denied.code == 3
    assert "anonymous access was refused; log in with `docker login`" in denied.err
    paths = {
        "REGISTRY_AUTH_FILE": tmp_path / "auth.json",
        "XDG_RUNTIME_DIR": tmp_path / "run/containers/auth.json",
        "docker": Path.home() / ".docker/config.json",
    }
    if where == "REGISTRY_AUTH_FILE":
        monkeypatch.setenv("REGISTRY_AUTH_FILE", str(paths[where]))
    write_auth_file(paths[where], host)
    registry.token.reset(required=BASIC)
    results = [
        run_cli("--repo", megatron_repo, "-v", "--dry-run", "image", "bump", "26.09-py3"),
        run_cli("--repo", megatron_repo, "-v", "--json", "image", "tags"),
        run_cli("--repo", megatron_repo, "-v", "image", "bump", "26.09-py3"),
    ]
    assert [r.code for r in results] == [0, 0, 0], [r.err for r in results]
    assert set(registry.token.seen) == {BASIC}
    # REGISTRY_AUTH_FILE names a file, not a secret: its path is shown (redact.py).
    assert f"registry: credentials from {paths[where]}" in results[0].err
    for result in results:
        for text in (result.out, result.err):
            assert SECRET not in text and BASIC.split()[1] not in text


def test_refused_credentials_are_exit_3_and_stay_hidden(
    megatron_repo: Path, run_cli: Run, registry: Registries, tmp_path: Path
) -> None:
    registry.token.reset(required=BASIC)
    auth_file = tmp_path / "run/containers/auth.json"  # podman login's file
    write_auth_file(auth_file, registry.token_url.removeprefix("http://"), secret="wrong-pass-77")
    result = run_cli("--repo", megatron_repo, "-v", "image", "bump", "26.09-py3")
    assert result.code == 3
    assert f"the credentials from {auth_file} were refused" in result.err
    assert "wrong-pass-77" not in result.err + result.out


def test_latest_with_lts_moves_only_the_lts_lane(
    megatron_repo: Path, run_cli: Run, registry: Registries
) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "--json", "image", "bump", "--latest", "--lts")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert (payload["lane"], payload["from"], payload["to"]) == ("lts", "25.09-py3", "26.09-py3")
    after = snapshot(megatron_repo)
    assert after["docker/.ngc_version.lts"] == b"nvcr.io/nvidia/pytorch:26.09-py3"
    assert after["docker/.ngc_version.dev"] == before["docker/.ngc_version.dev"]


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["26.09-py3", "--latest"], "--latest picks the tag itself; got TAG 26.09-py3 as well"),
        ([], "name a TAG, or pass --latest"),
    ],
)
def test_tag_or_latest_exactly_one(
    megatron_repo: Path, run_cli: Run, words: list[str], message: str
) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", *words)
    assert result.code == 2
    assert message in result.err
    assert snapshot(megatron_repo) == before


def test_no_tag_for_the_lts_lane_hints_an_lts_bump(megatron_repo: Path, run_cli: Run) -> None:
    # The hint is a command to copy: for the LTS lane it must bump the LTS lane, not dev.
    result = run_cli("--repo", megatron_repo, "image", "bump", "--lts")
    assert result.code == 2
    assert "hint: uvdock image bump --lts " in result.err


def test_a_found_lane_lists_its_family_and_bumps_to_the_newest_complete_tag(
    make_repo: Callable[..., Path], run_cli: Run, registry: Registries
) -> None:
    """Issue 28: a lane found by meaning (ARG BASE_IMAGE) asks the same registry about its
    own image, ordered within its family (no `-igpu`, no `latest`)."""
    from samples import family

    repo = make_repo(family.BASE_IMAGE_ARG)
    lane = "docker/Dockerfile.ci:BASE_IMAGE"
    tags = run_cli("--repo", repo, "--json", "image", "tags", "--lane", lane)
    assert tags.code == 0, tags.err
    assert [row["tag"] for row in json.loads(tags.out)["tags"]] == [
        "26.10-py3", "26.09-py3", "26.06-py3", "25.11-py3", "24.12-py3",
    ]  # fmt: skip
    latest = run_cli("--repo", repo, "image", "bump", "--latest")
    assert latest.code == 0, latest.err
    text = (repo / "docker/Dockerfile.ci").read_text()
    assert "ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:26.09-py3" in text
    assert (repo / ".github/workflows/ci.yml").read_text().count("pytorch:26.09-py3") == 2
    missing = run_cli("--repo", repo, "image", "bump", "26.11-py3")
    assert missing.code == 2
    assert "nvcr.io/nvidia/pytorch:26.11-py3 does not exist in the registry" in missing.err
