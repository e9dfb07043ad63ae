"""The registry's headers and bodies as data: challenges, Link paging, platforms, tag order."""

from __future__ import annotations

import pytest

from uvdock.errors import InputRefused
from uvdock.registry import oci
from uvdock.registry.oci import Platform


def test_bearer_challenge_as_nvcr_sends_it() -> None:
    header = (
        'Bearer realm="https://nvcr.io/proxy_auth",'
        'scope="repository:nvidia/pytorch:pull,push", service="nvcr.io"'
    )
    challenge = oci.parse_challenge(header)
    assert challenge == oci.Challenge(
        "bearer",
        {
            "realm": "https://nvcr.io/proxy_auth",
            "scope": "repository:nvidia/pytorch:pull,push",
            "service": "nvcr.io",
        },
    )
    assert challenge is not None
    assert oci.bearer_realm_query(challenge) == {
        "service": "nvcr.io",
        "scope": "repository:nvidia/pytorch:pull,push",
    }


def test_challenge_with_escapes_unquoted_values_and_basic() -> None:
    parsed = oci.parse_challenge(r'Bearer realm="http://a/t\"x",service=reg,error="invalid_token"')
    assert parsed == oci.Challenge(
        "bearer", {"realm": 'http://a/t"x', "service": "reg", "error": "invalid_token"}
    )
    assert oci.parse_challenge('Basic realm="Registry Realm"') == oci.Challenge(
        "basic", {"realm": "Registry Realm"}
    )
    assert oci.parse_challenge("") is None


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            '</v2/nvidia/pytorch/tags/list?last=25.01-py3&n=2>; rel="next"',
            "http://127.0.0.1:5000/v2/nvidia/pytorch/tags/list?last=25.01-py3&n=2",
        ),
        (
            '<https://other/prev>; rel="prev", <https://r.example/v2/x/tags/list?n=2&last=b>; rel=next',
            "https://r.example/v2/x/tags/list?n=2&last=b",
        ),
        ('</v2/x>; rel="last"', None),
        ("", None),
        (None, None),
    ],
)
def test_next_page_from_link(header: str | None, expected: str | None) -> None:
    current = "http://127.0.0.1:5000/v2/nvidia/pytorch/tags/list?n=2"
    assert oci.next_page(header, current) == expected


def test_release_tags_newest_first_whatever_the_registry_order() -> None:
    listed = ["latest", "25.01-py3", "26.09-py3-igpu", "24.12-py3", "26.10-py3", "26.13-py3"]
    assert oci.release_tags([*listed, "25.01-py3"]) == ["26.10-py3", "25.01-py3", "24.12-py3"]


def test_nearest_tags_by_distance_in_months() -> None:
    existing = ["24.12-py3", "25.01-py3", "25.03-py3", "25.06-py3", "26.01-py3", "latest"]
    assert oci.nearest_tags("25.02-py3", existing) == ["25.03-py3", "25.01-py3", "24.12-py3"]
    assert oci.nearest_tags("27.01-py3", existing, count=2) == ["26.01-py3", "25.06-py3"]
    assert oci.nearest_tags("25.02-py3", ["latest"]) == []


def test_list_platforms_skips_attestations_and_doubles() -> None:
    body = {
        "manifests": [
            {"platform": {"os": "linux", "architecture": "amd64"}},
            {"platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}},
            {"platform": {"os": "unknown", "architecture": "unknown"}},
            {"platform": {"os": "linux", "architecture": "amd64"}},
            {"digest": "sha256:no-platform"},
        ]
    }
    have = oci.list_platforms(body)
    assert have == [Platform("linux", "amd64"), Platform("linux", "arm64", "v8")]
    assert [str(p) for p in have] == ["linux/amd64", "linux/arm64/v8"]
    assert oci.missing_platforms(["amd64", "arm64"], have) == []
    assert oci.missing_platforms(["linux/arm64/v8", "ppc64le"], have) == ["ppc64le"]
    assert oci.missing_platforms(["amd64", "arm64"], [Platform("linux", "amd64")]) == ["arm64"]


def test_media_type_from_body_then_header() -> None:
    assert oci.manifest_media_type("text/plain", {"mediaType": oci.DOCKER_LIST}) == oci.DOCKER_LIST
    assert oci.is_list(oci.manifest_media_type(oci.OCI_INDEX + "; charset=utf-8", {}))
    assert not oci.is_list(oci.manifest_media_type(None, {"config": {}}))
    digest = "sha256:" + "ab" * 32
    assert oci.config_digest({"config": {"digest": digest}}) == digest
    assert oci.config_digest({"config": {"digest": "sha256:abc"}}) is None  # not a digest
    assert oci.config_digest({"config": {"digest": "md5:abc"}}) is None


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("nvcr.io/nvidia/pytorch", ("nvcr.io", "nvidia/pytorch")),
        ("localhost:5000/a/b", ("localhost:5000", "a/b")),
        ("python", ("docker.io", "library/python")),
        ("nvidia/cuda", ("docker.io", "nvidia/cuda")),
    ],
)
def test_split_image(image: str, expected: tuple[str, str]) -> None:
    assert oci.split_image(image) == expected


def test_registry_url_allows_http_only_on_loopback() -> None:
    assert oci.registry_url("https://mirror.example/", "config") == "https://mirror.example"
    assert oci.registry_url("http://127.0.0.1:5000", "config") == "http://127.0.0.1:5000"
    assert oci.registry_url("http://[::1]:5000/", "config") == "http://[::1]:5000"
    assert oci.registry_url("http://localhost:5000", "config") == "http://localhost:5000"
    with pytest.raises(InputRefused, match="plain http is allowed only for a loopback"):
        oci.registry_url("http://mirror.example", "config")
    with pytest.raises(InputRefused, match="must not hold credentials"):
        oci.registry_url("https://user:pw@mirror.example", "config")
    with pytest.raises(InputRefused, match="not an http"):
        oci.registry_url("ftp://mirror.example", "config")


@pytest.mark.parametrize(
    ("origin", "target", "allowed"),
    [
        ("https://nvcr.io/v2/x", "https://cdn.example/blob", True),
        ("https://nvcr.io/v2/x", "http://nvcr.io/v2/x", False),
        ("https://nvcr.io/v2/x", "http://cdn.example/blob", False),
        ("http://127.0.0.1:5000/v2/x", "http://127.0.0.1:5000/v2/y", True),
        ("http://127.0.0.1:5000/v2/x", "http://127.0.0.1:6000/v2/y", False),
        ("http://127.0.0.1:5000/v2/x", "file:///etc/passwd", False),
    ],
)
def test_redirect_policy(origin: str, target: str, allowed: bool) -> None:
    assert oci.redirect_allowed(origin, target) is allowed


def test_same_origin() -> None:
    assert oci.same_origin("https://nvcr.io/v2/a", "https://NVCR.io/v2/b")
    assert not oci.same_origin("https://nvcr.io/v2/a", "https://cdn.nvcr.io/b")
    assert not oci.same_origin("http://127.0.0.1:5000/", "http://127.0.0.1:5001/")
