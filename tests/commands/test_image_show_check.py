"""`uvdock image show` and `uvdock image check` through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml
from conftest import RunCli
from samples.pins import DEV, build_yml, dev_row, lts_row, pin_files, standard_rows

ROOT = Path(__file__).resolve().parents[2]


def with_mentions(files: dict[str, str | bytes]) -> dict[str, str | bytes]:
    files = dict(files)
    files[".github/workflows/cicd.yml"] = (
        "jobs:\n  unit:\n    container:\n      image: nvcr.io/nvidia/pytorch:25.04-py3\n"
    )
    files["examples/README.md"] = "Use nvcr.io/nvidia/pytorch:24.10-py3 or python:3.10.\n"
    return files


def test_show_json_lists_managed_then_informational(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(with_mentions(pin_files()))
    result = run_cli("--repo", repo, "--json", "image", "show")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["pins"][-2:] == [
        {"path": ".github/workflows/cicd.yml", "line": 4, "lane": None, "tag": "25.04-py3",
         "managed": False, "kind": "informational"},
        {"path": "examples/README.md", "line": 1, "lane": None, "tag": "24.10-py3",
         "managed": False, "kind": "informational"},
    ]  # fmt: skip
    managed = [(p["path"], p["line"], p["lane"]) for p in payload["pins"] if p["managed"]]
    assert managed == [
        (".gitlab/stages/01.build.yml", 7, "lts"),
        (".gitlab/stages/01.build.yml", 11, "lts"),
        (".gitlab/stages/01.build.yml", 16, "dev"),
        (".gitlab/stages/01.build.yml", 21, "dev"),
        ("docker/.ngc_version.dev", 1, "dev"),
        ("docker/.ngc_version.lts", 1, "lts"),
        ("docker/Dockerfile.ci.dev", 3, "dev"),
    ]
    assert set(payload["pins"][0]) == {"path", "line", "lane", "tag", "managed", "kind"}


def test_show_table_on_real_megatron(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "image", "show")
    assert result.code == 0, result.err
    for location in (
        ".gitlab/stages/01.build.yml:65",
        "docker/Dockerfile.ci.dev:4",
        "docker/.ngc_version.lts:1",
    ):
        assert location in result.out
    assert "python:3.10" not in result.out and "nemo" not in result.out
    assert "managed" in result.out


def test_project_inside_a_larger_checkout(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    files = {f"proj/{rel}": text for rel, text in with_mentions(pin_files()).items()}
    files["other/Dockerfile"] = "FROM nvcr.io/nvidia/pytorch:23.01-py3\n"
    repo = make_repo(files)
    result = run_cli("--repo", repo / "proj", "--json", "image", "show")
    assert result.code == 0, result.err
    found = json.loads(result.out)["pins"]
    assert ("docker/.ngc_version.dev", True) in {(p["path"], p["managed"]) for p in found}
    assert [p["path"] for p in found if not p["managed"]] == [
        ".github/workflows/cicd.yml",
        "examples/README.md",
    ]


def test_check_passes_on_real_megatron(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "image", "check")
    assert result.code == 0, result.err
    assert result.out == "base-image pins agree: dev 26.06-py3 (4 pins), lts 25.09-py3 (3 pins)\n"


def test_check_names_each_drifting_pin(megatron_repo: Path, run_cli: RunCli) -> None:
    # The real failure: a bump that forgot the Dockerfile default (PR #5632).
    pin = megatron_repo / "docker/.ngc_version.dev"
    pin.write_bytes(b"nvcr.io/nvidia/pytorch:26.08-py3\n")
    gitlab = megatron_repo / ".gitlab/stages/01.build.yml"
    gitlab.write_bytes(gitlab.read_bytes().replace(b"26.06-py3", b"26.08-py3"))
    result = run_cli("--repo", megatron_repo, "image", "check")
    assert result.code == 1
    assert result.out == (
        "docker/Dockerfile.ci.dev:4: dev pin is 26.06-py3, expected 26.08-py3 "
        "(from docker/.ngc_version.dev)\n"
    )
    assert "error: 1 base-image pin finding" in result.err
    assert "uvdock image bump 26.08-py3" in result.err


def test_check_json_findings(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    rows = [lts_row("amd64"), lts_row("arm64"), dev_row("amd64", DEV.replace("06", "05"))]
    repo = make_repo(pin_files(build_yml(rows, eol="\r\n", quotes=("'",))))
    result = run_cli("--repo", repo, "--json", "image", "check")
    assert result.code == 1
    assert result.err == ""
    payload = json.loads(result.out)
    assert payload["ok"] is False
    assert payload["lanes"] == {"dev": "26.06-py3", "lts": "25.09-py3"}
    assert [(f["kind"], f["path"], f["line"], f["tag"], f["expected"])
            for f in payload["findings"]] == [
        ("platform-missing", ".gitlab/stages/01.build.yml", 13, None, None),
        ("drift", ".gitlab/stages/01.build.yml", 16, "26.05-py3", "26.06-py3"),
    ]  # fmt: skip


def test_check_reports_malformed_pin_file(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo(pin_files(dev_pin="nvcr.io/nvidia/pytorch:26.6-py3\n"))
    result = run_cli("--repo", repo, "image", "check")
    assert result.code == 1
    assert result.out.startswith(
        "docker/.ngc_version.dev:1: dev pin `nvcr.io/nvidia/pytorch:26.6-py3` is not "
    )


def test_check_with_only_pin_files_and_no_ci(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({"docker/.ngc_version.dev": DEV})
    result = run_cli("--repo", repo, "image", "check")
    assert result.code == 1
    assert "the lts lane has no managed pin" in result.out
    (repo / "uvdock.toml").write_text('lts-pin-file = ""\n')  # this repository has no LTS lane
    result = run_cli("--repo", repo, "image", "check")
    assert (result.code, result.out) == (0, "base-image pins agree: dev 26.06-py3 (1 pin)\n")


def test_check_outside_a_repository_is_exit_3(tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", tmp_path, "image", "check")
    assert result.code == 3


def test_variant_with_every_layout_quirk_passes(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    yml = build_yml(
        [list(reversed(r)) for r in standard_rows()],
        indent=8,
        step=4,
        quotes=("", "'", '"'),
        comments=True,
        eol="\r\n",
    )
    result = run_cli("--repo", make_repo(pin_files(yml)), "image", "check")
    assert result.code == 0, result.out + result.err


def test_pre_commit_hook_definition() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "uvdock-image-check"]
    assert hook["entry"] == "uvdock image check"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False
    assert hook["always_run"] is True
