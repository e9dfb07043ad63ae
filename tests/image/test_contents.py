"""What a bump moves (image/contents.py) and how the body shows it (image/pr_body.py), on
image data built by hand: fallbacks between NGC's variable names, platforms that disagree,
call-outs, and registry text that tries to break the Markdown."""

from __future__ import annotations

import pytest
from samples import gfm

from uvdock.image import contents, pr_body
from uvdock.registry import oci
from uvdock.registry.image_config import PlatformImage, TagImage, environment

DIGEST = "sha256:" + "a" * 64


def image(tag: str, *envs: dict[str, str], platforms: tuple[str, ...] = ()) -> TagImage:
    names = platforms or ("linux/amd64", "linux/arm64")[: len(envs)]
    return TagImage(
        tag, DIGEST, tuple(PlatformImage(p, DIGEST, e) for p, e in zip(names, envs, strict=False))
    )


def by_label(before: TagImage | None, after: TagImage | None) -> dict[str, contents.Component]:
    return {c.label: c for c in contents.compare(before, after)}


def test_fallback_names_and_only_what_is_stated() -> None:
    old = image(
        "25.01-py3", {"PYTORCH_BUILD_VERSION": "2.6.0a0+df5bbc0", "TENSORRT_VERSION": "10.7"}
    )
    new = image(
        "25.02-py3", {"PYTORCH_VERSION": "2.7.0a0", "TRT_VERSION": "10.8", "PYTHON_VERSION": "3.12"}
    )
    found = by_label(old, new)
    assert list(found) == ["PyTorch", "TensorRT", "Python"]
    assert (found["PyTorch"].key, found["PyTorch"].before) == ("PYTORCH_VERSION", "2.6.0a0+df5bbc0")
    assert found["TensorRT"].before == "10.7" and found["TensorRT"].after == "10.8"
    assert found["Python"].before == "" and found["Python"].after == "3.12"


@pytest.mark.parametrize(
    ("label", "before", "after", "callout"),
    [
        ("PyTorch", "2.8.0a0+5228986", "2.9.0a0+50eac81", "minor"),
        ("PyTorch", "2.9.0", "3.0.0", "major"),
        ("PyTorch", "2.9.0a0+1", "2.9.1", ""),
        ("CUDA", "12.9.1.010", "13.0.1.012", "major"),
        ("CUDA", "12.9.0", "12.9.1", ""),
        ("CUDA", "unknown", "13.0", ""),
        ("cuDNN", "9.10.2.21", "10.0.0", ""),  # only PyTorch and CUDA are called out
    ],
)
def test_callouts(label: str, before: str, after: str, callout: str) -> None:
    key = {"PyTorch": "PYTORCH_VERSION", "CUDA": "CUDA_VERSION", "cuDNN": "CUDNN_VERSION"}[label]
    found = by_label(image("a", {key: before}), image("b", {key: after}))[label]
    assert found.callout == callout


def test_platforms_that_disagree_are_shown_each() -> None:
    new = image("26.09-py3", {"CUDA_VERSION": "13.0.1"}, {"CUDA_VERSION": "13.0.2"})
    assert by_label(None, new)["CUDA"].after == "13.0.1 (linux/amd64), 13.0.2 (linux/arm64)"


def test_unread_platforms_are_left_out_and_named() -> None:
    broken = TagImage(
        "26.09-py3",
        DIGEST,
        (
            PlatformImage("linux/amd64", DIGEST, {"CUDA_VERSION": "13.0"}),
            PlatformImage("linux/arm64", DIGEST, None, "registry: blob is not a JSON object"),
        ),
    )
    assert by_label(None, broken)["CUDA"].after == "13.0"
    assert contents.problems((None, broken)) == [
        "26.09-py3 (linux/arm64): registry: blob is not a JSON object"
    ]


def test_release_notes_url() -> None:
    assert contents.release_notes_url("26.03-py3").endswith("/rel-26-03.html")


def test_environment_reads_config_env_as_docker_does() -> None:
    config = {"config": {"Env": ["A=1", "B=x=y", "junk", 7, "A=2"]}}
    assert environment(config) == {"A": "2", "B": "x=y"}
    assert environment({"config": None}) == {} and environment({}) == {}


def test_json_keeps_only_version_variables() -> None:
    new = image("26.09-py3", {"CUDA_VERSION": "13.0", "HF_TOKEN": "hf_secret", "PATH": "/bin"})
    data = contents.ImageReport("26.06-py3", "26.09-py3", None, new).to_json()
    assert data["to"]["platforms"][0]["env"] == {"CUDA_VERSION": "13.0"}


def test_hostile_registry_text_cannot_break_the_body() -> None:
    evil = {
        "CUDA_VERSION": "13.0` | injected | `x\n### Heading\x1b[31m",
        "NCCL_VERSION": "2." + "9" * 5000,
    }
    new = TagImage("26.09-py3", DIGEST, (PlatformImage("linux/arm|64", DIGEST, evil),))
    report = contents.ImageReport("26.06-py3", "26.09-py3", None, new)
    body = pr_body.render("dev", "26.09-py3", "26.06-py3", [], report)
    assert "\x1b" not in body and "\n### Heading" not in body
    rows = gfm.table_rows(body)
    component_rows = [r for r in rows if r and r[0] in ("CUDA", "NCCL")]
    assert all(len(r) == 3 for r in component_rows)  # no cell escaped its column
    assert max(len(line) for line in body.splitlines()) < 400
    assert next(r for r in rows if r and r[0].startswith("linux/arm"))[1:] == ["-", f"`{DIGEST}`"]


def test_a_hostile_digest_is_not_followed() -> None:
    listing = {
        "manifests": [
            {"digest": DIGEST, "platform": {"os": "linux", "architecture": "amd64"}},
            {
                "digest": "sha256:\x1b[2J" + "0" * 60,
                "platform": {"os": "linux", "architecture": "arm64"},
            },
            {"digest": "sha256:../../../v2/x", "platform": {"os": "linux", "architecture": "arm"}},
        ]
    }
    assert [str(p) for p, _ in oci.list_entries(listing)] == ["linux/amd64"]
    assert oci.config_digest({"config": {"digest": "sha256:abc"}}) is None
