"""`image bump --pr-body` shows what moves, and `image show --digests | --versions`, against
a real registry on loopback (CNCF distribution) holding two-platform images pushed by podman
with NGC-style ENV (tests/samples/oci_registry.py NGC_ENV).

The broken-registry cases (a config blob deleted, a config blob that is not JSON, a registry
that stops answering) run on a registry of their own, so the shared one stays intact.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from conftest import RunCli
from samples import gfm, json_schemas
from samples.oci_registry import (
    NGC_ENV,
    REPOSITORY,
    Registries,
    free_port,
    push_images,
    registry_config,
    relay,
    require_tools,
    start_registry,
)
from samples.pins import snapshot

pytestmark = pytest.mark.engine

LIST_ACCEPT = "application/vnd.oci.image.index.v1+json, " + (
    "application/vnd.docker.distribution.manifest.list.v2+json"
)
NOTES = "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-26-09.html"


def _get(url: str, accept: str = LIST_ACCEPT) -> tuple[dict[str, Any], str]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read()), response.headers["Docker-Content-Digest"]


def platform_digests(open_url: str, tag: str) -> dict[str, str]:
    """{linux/amd64: sha256:...} as the registry's list says, read without uvdock."""
    body, _ = _get(f"{open_url}/v2/{REPOSITORY}/manifests/{tag}")
    return {
        f"{m['platform']['os']}/{m['platform']['architecture']}": m["digest"]
        for m in body["manifests"]
    }


def test_pr_body_shows_versions_digests_and_release_notes(
    megatron_repo: Path, run_cli: RunCli, registry: Registries
) -> None:
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.09-py3", "--pr-body")
    assert result.code == 0, result.err
    body = result.out
    assert body.startswith("chore: Update Docker image version to 26.09-py3\n\n")
    assert "- **PyTorch 2.8 -> 2.9 (a new minor release)**" in body
    assert "- **CUDA 12.9 -> 13.0 (a new major release)**" in body
    assert "| Component | `26.06-py3` | `26.09-py3` |" in body
    assert "| PyTorch | `2.8.0a0+5228986` | **`2.9.0a0+50eac81`** |" in body
    assert "| CUDA | `12.9.1.010` | **`13.0.1.012`** |" in body
    assert "| cuDNN | `9.10.2.21` | **`9.13.0.50`** |" in body
    assert "| NCCL | `2.27.3` | **`2.27.7`** |" in body
    assert "| TensorRT | `10.11.0.33` | **`10.13.3.9`** |" in body
    assert "| Transformer Engine | `2.4` | **`2.7`** |" in body
    assert "| NGC PyTorch release | `26.06` | **`26.09`** |" in body
    assert "Python" not in body  # not stated by these images: not shown
    old, new = (platform_digests(registry.open_url, t) for t in ("26.06-py3", "26.09-py3"))
    for platform in ("linux/amd64", "linux/arm64"):
        assert f"| {platform} | `{old[platform]}` | `{new[platform]}` |" in body
    assert f"Release notes of `26.09-py3`: {NOTES}" in body
    assert "not checked" not in body and "Not read" not in body
    assert body.index("### Pins changed") < body.index("### Image contents")
    assert body.index("### Image contents") < body.index("### Checklist")
    # One anonymous token for the whole command: the tag check's client reads the contents.
    assert registry.token.seen == [""]
    assert gfm.task_items(body)  # the checklist still renders as task items
    rows = gfm.table_rows(body)  # as GitHub renders them: the tables hold
    assert ["PyTorch", "`2.8.0a0+5228986`", "**`2.9.0a0+50eac81`**"] in rows
    assert ["linux/arm64", f"`{old['linux/arm64']}`", f"`{new['linux/arm64']}`"] in rows
    assert "image contents: CUDA 12.9 -> 13.0 (a new major release)" in result.err


def test_json_carries_the_same_data(
    megatron_repo: Path, run_cli: RunCli, registry: Registries
) -> None:
    result = run_cli(
        "--repo", megatron_repo, "--json", "--dry-run", "image", "bump", "26.09-py3", "--pr-body"
    )
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    json_schemas.check(payload)  # the documented shape (docs/json.md)
    contents = payload["image_contents"]
    assert contents["checked"] is True and contents["skipped"] is None
    assert contents["release_notes"] == NOTES
    by_name = {v["name"]: v for v in contents["versions"]}
    assert by_name["PyTorch"] == {
        "name": "PyTorch", "key": "PYTORCH_VERSION", "from": "2.8.0a0+5228986",
        "to": "2.9.0a0+50eac81", "changed": True, "callout": "minor",
    }  # fmt: skip
    assert by_name["CUDA"]["callout"] == "major"
    assert by_name["cuDNN"]["callout"] is None
    assert contents["callouts"] == [
        "PyTorch 2.8 -> 2.9 (a new minor release)",
        "CUDA 12.9 -> 13.0 (a new major release)",
    ]
    new = platform_digests(registry.open_url, "26.09-py3")
    assert {p["platform"]: p["digest"] for p in contents["to"]["platforms"]} == new
    # Only the version variables: PATH and whatever else an image sets stay out.
    assert contents["to"]["platforms"][1]["env"] == NGC_ENV["26.09-py3"]
    assert contents["problems"] == [] and contents["not_found"] == []
    assert "| CUDA | `12.9.1.010` | **`13.0.1.012`** |" in payload["pr_body"]


def test_offline_body_says_the_contents_were_not_checked(
    megatron_repo: Path, run_cli: RunCli, registry: Registries
) -> None:
    result = run_cli(
        "--repo", megatron_repo, "image", "bump", "26.09-py3", "--pr-body", "--offline"
    )
    assert result.code == 0, result.err
    assert (
        "The image contents were not checked (offline: --offline): component versions and "
        "manifest digests are not shown." in result.out
    )
    assert f"Release notes of `26.09-py3`: {NOTES}" in result.out
    assert registry.token.seen == []  # not asked at all


def test_lts_old_tag_missing_from_the_registry_is_said(
    megatron_repo: Path, run_cli: RunCli, registry: Registries
) -> None:
    result = run_cli(
        "--repo", megatron_repo, "--dry-run", "image", "bump", "--lts", "26.09-py3", "--pr-body"
    )
    assert result.code == 0, result.err
    assert "- 25.09-py3: not in the registry" in result.out
    assert "| CUDA | - | **`13.0.1.012`** |" in result.out  # the new image is still shown


def test_image_show_digests_lists_each_managed_tag(
    megatron_repo: Path, run_cli: RunCli, registry: Registries
) -> None:
    result = run_cli("--repo", megatron_repo, "--json", "image", "show", "--digests")
    assert result.code == 0, result.err
    json_schemas.check(json.loads(result.out))
    images = json.loads(result.out)["images"]
    assert [(i["lane"], i["tag"]) for i in images] == [("dev", "26.06-py3")]  # no LTS by default
    expected = platform_digests(registry.open_url, "26.06-py3")
    assert {p["platform"]: p["digest"] for p in images[0]["platforms"]} == expected
    assert all(p["env"] is None for p in images[0]["platforms"])  # digests only: no config read
    _, list_digest = _get(f"{registry.open_url}/v2/{REPOSITORY}/manifests/26.06-py3")
    assert images[0]["digest"] == list_digest
    table = run_cli("--repo", megatron_repo, "image", "show", "--versions")
    assert table.code == 0, table.err
    assert expected["linux/arm64"] in table.out and "2.8.0a0+5228986" in table.out
    lts = run_cli("--repo", megatron_repo, "--json", "image", "show", "--digests", "--lts")
    assert lts.code == 1  # the LTS pin 25.09-py3 is not in this registry: a finding
    assert "not in the registry" in lts.err and "25.09-py3 (lts)" in lts.err
    assert [i["found"] for i in json.loads(lts.out)["images"]] == [True, False]


def test_image_show_digests_offline_is_refused(
    megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")
    result = run_cli("--repo", megatron_repo, "image", "show", "--digests")
    assert result.code == 2
    assert "offline mode is on" in result.err


# -- a registry of our own, with broken config blobs --------------------------------------


def _upload_blob(base: str, data: bytes) -> str:
    import hashlib

    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    start = urllib.request.Request(f"{base}/v2/{REPOSITORY}/blobs/uploads/", method="POST")
    with urllib.request.urlopen(start, timeout=10) as response:
        location = response.headers["Location"]
    target = location + ("&" if "?" in location else "?") + f"digest={digest}"
    put = urllib.request.Request(target, data=data, method="PUT")
    put.add_header("Content-Type", "application/octet-stream")
    urllib.request.urlopen(put, timeout=10).close()
    return digest


def _put_manifest(base: str, reference: str, body: dict[str, Any]) -> str:
    data = json.dumps(body).encode()
    request = urllib.request.Request(
        f"{base}/v2/{REPOSITORY}/manifests/{reference}", data=data, method="PUT"
    )
    request.add_header("Content-Type", body["mediaType"])
    with urllib.request.urlopen(request, timeout=10) as response:
        digest: str = response.headers["Docker-Content-Digest"]
        return digest


def _platform_manifest(base: str, digest: str) -> dict[str, Any]:
    accept = "application/vnd.docker.distribution.manifest.v2+json"
    body, _ = _get(f"{base}/v2/{REPOSITORY}/manifests/{digest}", accept)
    return body


def break_configs(base: str) -> None:
    """26.09-py3: the arm64 config blob deleted. 26.07-py3: a copy of 26.09 whose arm64
    manifest names a config blob that is not JSON."""
    digests = platform_digests(base, "26.09-py3")
    listing, _ = _get(f"{base}/v2/{REPOSITORY}/manifests/26.09-py3")
    arm = _platform_manifest(base, digests["linux/arm64"])
    garbage = b"\x89PNG not an image config\n"
    bad = {**arm, "config": {**arm["config"], "digest": _upload_blob(base, garbage)}}
    bad["config"]["size"] = len(garbage)
    bad_digest = _put_manifest(base, "broken-arm64", bad)
    size = len(json.dumps(bad).encode())
    listing["manifests"] = [
        {**m, "digest": bad_digest, "size": size} if m["digest"] == digests["linux/arm64"] else m
        for m in listing["manifests"]
    ]
    _put_manifest(base, "26.07-py3", listing)
    delete = urllib.request.Request(
        f"{base}/v2/{REPOSITORY}/blobs/{arm['config']['digest']}", method="DELETE"
    )
    urllib.request.urlopen(delete, timeout=10).close()


@pytest.fixture(scope="module")
def broken_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_tools()
    folder = tmp_path_factory.mktemp("oci-broken")
    storage = folder / "storage"
    storage.mkdir()
    process, url = start_registry(folder, "broken", registry_config(storage, free_port()))
    try:
        host = url.removeprefix("http://")
        pushes = (("26.06-py3", "oci"), ("26.09-py3", "v2s2"))
        push_images(folder, host, ((t, ("amd64", "arm64"), NGC_ENV[t], f) for t, f in pushes))
        break_configs(url)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize(
    ("tag", "problem"),
    [
        ("26.09-py3", "answered HTTP 404 for /v2/nvidia/pytorch/blobs/sha256:"),
        ("26.07-py3", "blob sha256:"),
    ],
)
def test_unreadable_config_does_not_block_the_bump(
    megatron_repo: Path,
    run_cli: RunCli,
    broken_registry: str,
    monkeypatch: pytest.MonkeyPatch,
    tag: str,
    problem: str,
) -> None:
    monkeypatch.setenv("UVDOCK_REGISTRY", broken_registry)
    result = run_cli("--repo", megatron_repo, "image", "bump", tag, "--pr-body")
    assert result.code == 0, result.err
    assert (megatron_repo / "docker/.ngc_version.dev").read_text().strip().endswith(tag)
    body = result.out
    assert "Not read from the registry:" in body
    line = next(x for x in body.splitlines() if x.startswith(f"- {tag} (linux/arm64): "))
    assert problem in line
    if tag == "26.07-py3":
        assert "is not a JSON object" in line
    assert "| CUDA | `12.9.1.010` | **`13.0.1.012`** |" in body  # amd64 was read
    assert "| linux/arm64 |" in body  # its digest is known all the same
    assert "image contents not read" in result.err


@pytest.mark.parametrize("tag", ["26.09-py3", "26.07-py3"])
def test_unreadable_config_asked_directly_is_exit_3(
    make_repo: Any, run_cli: RunCli, broken_registry: str, monkeypatch: pytest.MonkeyPatch, tag: str
) -> None:
    monkeypatch.setenv("UVDOCK_REGISTRY", broken_registry)
    repo = make_repo({"docker/.ngc_version.dev": f"nvcr.io/nvidia/pytorch:{tag}\n"})
    result = run_cli("--repo", repo, "image", "show", "--versions")
    assert result.code == 3, result.err
    assert result.err.startswith("uvdock: registry: ") or "registry: " in result.err
    assert "Traceback" not in result.err
    digests = run_cli("--repo", repo, "image", "show", "--digests")  # manifests only: fine
    assert digests.code == 0, digests.err


class CutOff:
    """Forwards the first `limit` requests to a registry, then hangs up on every other one:
    a registry that goes away between the tag check and the contents."""

    def __init__(self, upstream: str, limit: int) -> None:
        self.upstream, self.limit, self.count = urlsplit(upstream).netloc, limit, 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.count += 1
                if owner.count > owner.limit:
                    self.close_connection = True
                    return  # no answer at all
                relay(self, owner.upstream, self.path)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_registry_gone_after_the_tag_check_says_not_checked(
    megatron_repo: Path, run_cli: RunCli, registries: Registries, monkeypatch: pytest.MonkeyPatch
) -> None:
    front = CutOff(registries.open_url, limit=1)  # the tag check's one manifest request
    try:
        monkeypatch.setenv("UVDOCK_REGISTRY", front.url)
        before = snapshot(megatron_repo)
        result = run_cli("--repo", megatron_repo, "image", "bump", "26.09-py3", "--pr-body")
    finally:
        front.stop()
    assert result.code == 0, result.err
    assert snapshot(megatron_repo) != before
    assert "The image contents were not checked (the registry could not be read: registry: " in (
        result.out
    )
    assert "image contents not read" in result.err
