"""`uvdock image bump TAG [--lts] [--allow-downgrade]`: byte-level results through the CLI."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, git
from samples.pins import DEV, LTS, build_yml, pin_files, snapshot, standard_rows

NEW = "nvcr.io/nvidia/pytorch:26.09-py3"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the edit: no registry here (tests/commands/test_image_registry.py
    runs bumps against a real one)."""
    monkeypatch.setenv("UVDOCK_OFFLINE", "1")


def replace_on_lines(data: bytes, lines: set[int], old: str, new: str) -> bytes:
    """The expected bytes: `old` -> `new` on exactly these 1-based lines."""
    parts = data.split(b"\n")
    for number in lines:
        assert old.encode() in parts[number - 1]
        parts[number - 1] = parts[number - 1].replace(old.encode(), new.encode())
    return b"\n".join(parts)


def test_dev_bump_on_real_megatron_changes_exactly_the_four_dev_pins(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.09-py3")
    assert result.code == 0, result.err
    after = snapshot(megatron_repo)
    assert after["docker/.ngc_version.dev"] == NEW.encode() + b"\n"  # keeps its final newline
    assert after["docker/.ngc_version.lts"] == before["docker/.ngc_version.lts"]
    assert after["docker/Dockerfile.ci.lts"] == before["docker/Dockerfile.ci.lts"]
    assert after["docker/Dockerfile.ci.dev"] == replace_on_lines(
        before["docker/Dockerfile.ci.dev"], {4}, DEV, NEW
    )
    assert after[".gitlab/stages/01.build.yml"] == replace_on_lines(
        before[".gitlab/stages/01.build.yml"], {65, 70}, DEV, NEW
    )
    changed = git(megatron_repo, "diff", "--name-only").split()
    assert sorted(changed) == [
        ".gitlab/stages/01.build.yml",
        "docker/.ngc_version.dev",
        "docker/Dockerfile.ci.dev",
    ]
    assert run_cli("--repo", megatron_repo, "image", "check").code == 0


def test_bump_prints_the_pull_request_handoff(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "image", "bump", NEW)
    assert result.code == 0, result.err
    out = result.out
    assert "dev base image: 26.06-py3 -> 26.09-py3" in out
    assert "docker/Dockerfile.ci.dev:4: 26.06-py3 -> 26.09-py3" in out
    assert "title: chore: Update Docker image version to 26.09-py3" in out
    assert "apply the `Run functional tests` label before the first push" in out
    assert "`/ok to test <commit-sha>` for each new commit" in out
    assert "--source github --pipeline-id <RUN_ID> --only-failing" in out
    assert "uvdock recipe mark-broken CASE --issue N --reason TEXT" in out


def test_lts_bump_touches_only_lts_and_keeps_missing_final_newline(
    megatron_repo: Path, run_cli: RunCli
) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", "--lts", "26.03-py3")
    assert result.code == 0, result.err
    after = snapshot(megatron_repo)
    new_lts = "nvcr.io/nvidia/pytorch:26.03-py3"
    assert after["docker/.ngc_version.lts"] == new_lts.encode()  # still no final newline
    assert after["docker/.ngc_version.dev"] == before["docker/.ngc_version.dev"]
    assert after["docker/Dockerfile.ci.dev"] == before["docker/Dockerfile.ci.dev"]
    assert after["docker/Dockerfile.ci.lts"] == before["docker/Dockerfile.ci.lts"]  # bare ARG
    assert after[".gitlab/stages/01.build.yml"] == replace_on_lines(
        before[".gitlab/stages/01.build.yml"], {56, 60}, LTS, new_lts
    )


def test_same_tag_is_a_noop(megatron_repo: Path, run_cli: RunCli) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.06-py3")
    assert (result.code, result.out) == (
        0,
        "dev pins are already at 26.06-py3: nothing to change\n",
    )
    assert snapshot(megatron_repo) == before


def test_same_tag_repairs_drift(megatron_repo: Path, run_cli: RunCli) -> None:
    dockerfile = megatron_repo / "docker/Dockerfile.ci.dev"
    original = dockerfile.read_bytes()
    dockerfile.write_bytes(original.replace(b"26.06-py3", b"25.11-py3"))
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.06-py3")
    assert result.code == 0, result.err
    assert dockerfile.read_bytes() == original


@pytest.mark.parametrize(
    ("tag", "hint"),
    [
        ("26.9-py3", "hint: did you mean `26.09-py3`?"),
        ("26.13-py3", "hint: NGC PyTorch tags look like 26.04-py3"),
        ("nvcr.io/nvidian/nemo:nightly", "hint: give a tag like 26.04-py3"),
    ],
)
def test_invalid_tags_are_refused_and_nothing_changes(
    megatron_repo: Path, run_cli: RunCli, tag: str, hint: str
) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", tag)
    assert result.code == 2
    assert result.err.startswith("error: ")
    assert hint in result.err
    assert snapshot(megatron_repo) == before


def test_downgrade_needs_allow_downgrade(megatron_repo: Path, run_cli: RunCli) -> None:
    before = snapshot(megatron_repo)
    refused = run_cli("--repo", megatron_repo, "image", "bump", "26.05-py3")
    assert refused.code == 2
    assert "26.05-py3 is older than the dev lane's current 26.06-py3" in refused.err
    assert "--allow-downgrade" in refused.err
    assert snapshot(megatron_repo) == before
    allowed = run_cli("--repo", megatron_repo, "image", "bump", "26.05-py3", "--allow-downgrade")
    assert allowed.code == 0, allowed.err
    assert (megatron_repo / "docker/.ngc_version.dev").read_bytes() == (
        b"nvcr.io/nvidia/pytorch:26.05-py3\n"
    )


def test_dry_run_shows_the_diff_and_writes_nothing(megatron_repo: Path, run_cli: RunCli) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "--dry-run", "image", "bump", "26.09-py3")
    assert result.code == 0, result.err
    assert "-ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.06-py3\n" in result.out
    assert "+ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:26.09-py3\n" in result.out
    assert "+++ b/.gitlab/stages/01.build.yml" in result.out
    assert "dry run: 4 dev pins would change; nothing written" in result.out
    assert snapshot(megatron_repo) == before


def test_json_payload(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "--json", "image", "bump", "26.09-py3")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert (payload["lane"], payload["from"], payload["to"], payload["dry_run"]) == (
        "dev", "26.06-py3", "26.09-py3", False,
    )  # fmt: skip
    assert [(p["path"], p["line"]) for p in payload["changed"]] == [
        (".gitlab/stages/01.build.yml", 65),
        (".gitlab/stages/01.build.yml", 70),
        ("docker/.ngc_version.dev", 1),
        ("docker/Dockerfile.ci.dev", 4),
    ]
    assert payload["handoff"]["title"] == "chore: Update Docker image version to 26.09-py3"


def test_crlf_quotes_comments_variant_byte_level(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    yml = build_yml(
        [list(reversed(r)) for r in standard_rows()],
        indent=8,
        step=4,
        quotes=("'", '"', ""),
        comments=True,
        eol="\r\n",
    )
    repo = make_repo(pin_files(yml, dev_pin=DEV))  # a dev pin file without final newline
    before = snapshot(repo)
    result = run_cli("--repo", repo, "image", "bump", "26.09-py3")
    assert result.code == 0, result.err
    after = snapshot(repo)
    assert after["docker/.ngc_version.dev"] == NEW.encode()
    old_lines = before[".gitlab/stages/01.build.yml"].split(b"\n")
    new_lines = after[".gitlab/stages/01.build.yml"].split(b"\n")
    changed = [(o, n) for o, n in zip(old_lines, new_lines, strict=True) if o != n]
    assert len(changed) == 2
    for old, new in changed:
        assert new == old.replace(DEV.encode(), NEW.encode())
        assert new.endswith(b"\r") and b"BASE_IMAGE" in new
    assert b"# keep in sync" in changed[0][1]
    assert run_cli("--repo", repo, "image", "check").code == 0


def test_missing_arm64_row_is_warned_and_the_rest_is_bumped(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    rows = [
        r for r in standard_rows() if ("IMAGE_TYPE", "dev") not in r or ("PLATFORM", "amd64") in r
    ]
    repo = make_repo(pin_files(build_yml(rows)))
    result = run_cli("--repo", repo, "image", "bump", "26.09-py3")
    assert result.code == 0, result.err
    assert "warning: .gitlab/stages/01.build.yml:13: no dev matrix row for platform arm64" in (
        result.err
    )
    assert (repo / ".gitlab/stages/01.build.yml").read_text().count(NEW) == 1


def test_all_files_or_none(
    megatron_repo: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(megatron_repo)
    real_replace = os.replace
    calls: list[str] = []

    def failing_replace(src: str | Path, dst: str | Path) -> None:
        calls.append(str(dst))
        if len(calls) == 3:  # the third file fails after two were moved into place
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr("uvdock.files.edit.os.replace", failing_replace)
    result = run_cli("--repo", megatron_repo, "image", "bump", "26.09-py3")
    monkeypatch.setattr("uvdock.files.edit.os.replace", real_replace)
    assert result.code == 3
    assert "Dockerfile.ci.dev: cannot replace: disk full; nothing was changed" in result.err
    assert len(calls) >= 3
    assert snapshot(megatron_repo) == before
    assert not [p for p in (megatron_repo / "docker").iterdir() if p.name.endswith(".uvdock")]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            "<<<<<<< HEAD\nnvcr.io/nvidia/pytorch:26.06-py3\n=======\n"
            "nvcr.io/nvidia/pytorch:26.05-py3\n>>>>>>> other\n",
            "holds merge-conflict markers",
        ),
        ("# bumped by hand\nnvcr.io/nvidia/pytorch:26.06-py3\n", "starts with a comment"),
        ("nvcr.io/nvidia/pytorch:26.06-py3\nnvcr.io/nvidia/pytorch:26.05-py3\n", "holds 2 words"),
        ("\n", "is empty"),
    ],
)
def test_pin_file_with_more_than_one_reference_is_found_and_refused(
    megatron_repo: Path, run_cli: RunCli, content: str, problem: str
) -> None:
    (megatron_repo / "docker/.ngc_version.dev").write_text(content)
    before = snapshot(megatron_repo)
    check = run_cli("--repo", megatron_repo, "image", "check")
    assert check.code == 1
    assert f"docker/.ngc_version.dev:1: dev pin file {problem}" in check.out
    bump = run_cli("--repo", megatron_repo, "image", "bump", "26.08-py3", "--offline")
    assert bump.code == 2
    assert problem in bump.err and "hint: fix the pin file by hand" in bump.err
    assert snapshot(megatron_repo) == before
    # The other lane is unaffected.
    lts = run_cli("--repo", megatron_repo, "--dry-run", "image", "bump", "25.10-py3", "--lts",
                  "--offline")  # fmt: skip
    assert lts.code == 0, lts.err


@pytest.mark.parametrize(
    "tag",
    # fullwidth 26, fullwidth 0, Arabic-Indic 26: digits to `\\d`, not to a registry
    [
        "\uff12\uff16.07-py3",
        "26.\uff107-py3",
        "\u0662\u0666.07-py3",
        "nvcr.io/nvidia/pytorch:\uff12\uff16.07-py3",
    ],
)
def test_only_ascii_digits_make_a_tag(megatron_repo: Path, run_cli: RunCli, tag: str) -> None:
    before = snapshot(megatron_repo)
    result = run_cli("--repo", megatron_repo, "image", "bump", tag, "--offline")
    assert result.code == 2
    assert "invalid tag" in result.err
    assert snapshot(megatron_repo) == before


def test_a_bom_before_the_pin_is_kept(megatron_repo: Path, run_cli: RunCli) -> None:
    pin = megatron_repo / "docker/.ngc_version.lts"
    pin.write_bytes(b"\xef\xbb\xbf" + pin.read_bytes())
    assert run_cli("--repo", megatron_repo, "image", "check").code == 0
    result = run_cli("--repo", megatron_repo, "image", "bump", "25.10-py3", "--lts", "--offline")
    assert result.code == 0, result.err
    assert pin.read_bytes() == b"\xef\xbb\xbfnvcr.io/nvidia/pytorch:25.10-py3"


@pytest.mark.parametrize(("lts", "current"), [((), "26.06-py3"), (("--lts",), None)])
def test_without_a_tag_the_hint_is_no_older_tag(
    megatron_repo: Path, run_cli: RunCli, lts: tuple[str, ...], current: str | None
) -> None:
    result = run_cli("--repo", megatron_repo, "image", "bump", *lts)
    assert result.code == 2
    hint = result.err.split("hint:", 1)[1]
    assert f"uvdock image bump {' '.join(lts)} --latest".replace("  ", " ") in hint
    assert "26.04-py3" not in hint  # older than the pins: a downgrade it would refuse
    if current is not None:
        assert current in hint
