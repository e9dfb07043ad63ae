"""Credentials from docker / podman auth files: which file, which entry, never shown."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from uvdock.registry.auth import find_credentials


def write_auth(path: Path, auths: dict[str, dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"auths": auths}))
    return path


def basic(user: str, secret: str) -> dict[str, str]:
    return {"auth": base64.b64encode(f"{user}:{secret}".encode()).decode()}


def header(user: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()


def test_podman_order_registry_auth_file_first(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "home"),
        "REGISTRY_AUTH_FILE": str(tmp_path / "explicit.json"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
    }
    write_auth(tmp_path / "explicit.json", {"nvcr.io": basic("$oauthtoken", "first")})
    write_auth(tmp_path / "run/containers/auth.json", {"nvcr.io": basic("u", "second")})
    write_auth(tmp_path / "home/.docker/config.json", {"nvcr.io": basic("u", "third")})
    found = find_credentials("nvcr.io", "nvidia/pytorch", env)
    assert found is not None
    assert found.basic_header() == header("$oauthtoken", "first")
    assert found.source == str(tmp_path / "explicit.json")
    del env["REGISTRY_AUTH_FILE"]
    found = find_credentials("nvcr.io", "nvidia/pytorch", env)
    assert found is not None and found.basic_header() == header("u", "second")


def test_podman_runtime_file_without_xdg_runtime_dir(tmp_path: Path) -> None:
    from uvdock.registry.auth import auth_files

    files = auth_files({"HOME": str(tmp_path)}, uid=1234)
    assert files[0] == Path("/run/containers/1234/auth.json")
    assert files[1:] == [
        tmp_path / ".config/containers/auth.json",
        tmp_path / ".docker/config.json",
    ]


def test_docker_config_url_keys_and_a_file_without_the_host(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    write_auth(tmp_path / "run/containers/auth.json", {"ghcr.io": basic("x", "y")})
    write_auth(
        tmp_path / ".docker/config.json",
        {"https://nvcr.io/v1/": basic("docker", "s3cret"), "127.0.0.1:5000": basic("a", "b")},
    )
    found = find_credentials("nvcr.io", "nvidia/pytorch", env)
    assert found is not None and found.basic_header() == header("docker", "s3cret")
    assert find_credentials("127.0.0.1:5000", "nvidia/pytorch", env) is not None
    assert find_credentials("127.0.0.1:5001", "nvidia/pytorch", env) is None


def test_namespaced_entry_wins_only_for_its_repositories(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "REGISTRY_AUTH_FILE": str(tmp_path / "auth.json")}
    env["XDG_RUNTIME_DIR"] = str(tmp_path / "run")  # never this machine's /run/containers
    write_auth(
        tmp_path / "auth.json",
        {"nvcr.io": basic("host", "h"), "nvcr.io/nvidia": basic("ns", "n")},
    )
    ns = find_credentials("nvcr.io", "nvidia/pytorch", env)
    other = find_credentials("nvcr.io", "nvidian/nemo", env)
    assert ns is not None and ns.basic_header() == header("ns", "n")
    assert other is not None and other.basic_header() == header("host", "h")


def test_broken_files_mean_anonymous_and_secrets_stay_hidden(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "REGISTRY_AUTH_FILE": str(tmp_path / "auth.json")}
    env["XDG_RUNTIME_DIR"] = str(tmp_path / "run")
    (tmp_path / "auth.json").write_text("{not json")
    assert find_credentials("nvcr.io", "nvidia/pytorch", env) is None
    write_auth(tmp_path / "auth.json", {"nvcr.io": {"auth": "!!not base64!!"}})
    assert find_credentials("nvcr.io", "nvidia/pytorch", env) is None
    write_auth(tmp_path / "auth.json", {"nvcr.io": {"username": "u", "password": "hunter22"}})
    found = find_credentials("nvcr.io", "nvidia/pytorch", env)
    assert found is not None
    assert "hunter22" not in repr(found) and "hunter22" not in str(found)
    assert "hunter22" not in f"{found}"
