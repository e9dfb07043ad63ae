"""Lanes on every layout Megatron-LM's `.gitlab/stages/01.build.yml` has had.

Layout 1 (tests/data/megatron-lm-history/2025-10-25-*): one platform-less row per lane, no pin
files, bare `ARG FROM_IMAGE_NAME`. Layout 2 (2026-02-04-*): LTS rows built from
Dockerfile.ci.dev with IMAGE_TYPE lts, no Dockerfile.ci.lts. Layout 3 (examples/megatron-lm):
today's. Each real state is checked as it is, then drifted and misconfigured on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli, git

from uvdock.config.settings import Config
from uvdock.errors import InputRefused
from uvdock.image import lanes, pins
from uvdock.image.bump import plan_bump
from uvdock.image.scan import scan_managed

DATA = Path(__file__).resolve().parents[1] / "data" / "megatron-lm-history"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "megatron-lm"
GITLAB = ".gitlab/stages/01.build.yml"
# (name, folder, dev pins, lts pins, rows per lane)
LAYOUTS = [
    ("2025-platformless", DATA / "2025-10-25-9697129223", 1, 1, 1),
    ("2026-lts-from-dev-dockerfile", DATA / "2026-02-04-d959620907", 3, 3, 2),
    ("today", EXAMPLE, 4, 3, 2),
]
IDS = [layout[0] for layout in LAYOUTS]


def _files(folder: Path) -> dict[str, str | bytes]:
    wanted = ("docker/Dockerfile.ci.", "docker/.ngc_version.", ".gitlab/")
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.relative_to(folder).as_posix().startswith(wanted)
    }


@pytest.fixture(params=LAYOUTS, ids=IDS)
def layout(request: pytest.FixtureRequest) -> tuple[str, Path, int, int, int]:
    return request.param  # type: ignore[no-any-return]


def _edit(repo: Path, path: str, old: str, new: str, count: int = 1) -> None:
    text = (repo / path).read_text()
    assert text.count(old) >= count, (path, old)
    (repo / path).write_text(text.replace(old, new, count))


def test_each_real_state_passes_as_it_is(
    layout: tuple[str, Path, int, int, int], make_repo: Callable[..., Path]
) -> None:
    _, folder, dev, lts, rows = layout
    scan = scan_managed(make_repo(_files(folder)), Config())
    assert pins.check(scan) == []
    assert (len(scan.lane_pins("dev")), len(scan.lane_pins("lts"))) == (dev, lts)
    for lane in ("dev", "lts"):
        assert len([p for p in scan.lane_pins(lane) if p.source == "gitlab"]) == rows
    assert scan.unclassified == []


def test_each_real_state_passes_on_the_command_line(
    layout: tuple[str, Path, int, int, int], make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(_files(layout[1]))
    result = run_cli("--repo", repo, "image", "check")
    assert result.code == 0, result.out + result.err
    assert "None" not in result.out


def test_a_dev_bump_never_moves_an_lts_row(
    layout: tuple[str, Path, int, int, int], make_repo: Callable[..., Path]
) -> None:
    repo = make_repo(_files(layout[1]))
    scan = scan_managed(repo, Config())
    plan = plan_bump(repo, scan, "dev", "26.08-py3", allow_downgrade=False)
    assert {pin.lane for pin in plan.changed} == {"dev"}
    after = {edit.display: edit.new for edit in plan.edits}
    for pin in scan.lane_pins("lts"):
        text = after.get(pin.path, scan.texts[pin.path])
        old_line = scan.texts[pin.path].split("\n")[pin.line - 1].encode()
        assert text.split("\n")[pin.line - 1].encode() == old_line
    rescanned = scan_managed(repo, Config())  # nothing written yet: plan only
    assert rescanned.texts == scan.texts


def test_a_dev_bump_on_the_command_line_leaves_lts_bytes(
    layout: tuple[str, Path, int, int, int], make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(_files(layout[1]))
    before = scan_managed(repo, Config())
    lts_lines = {
        (p.path, p.line): (repo / p.path).read_bytes().split(b"\n")[p.line - 1]
        for p in before.lane_pins("lts")
    }
    result = run_cli("--repo", repo, "image", "bump", "26.08-py3", "--offline")
    assert result.code == 0, result.err
    for (path, line), old in lts_lines.items():
        assert (repo / path).read_bytes().split(b"\n")[line - 1] == old
    after = scan_managed(repo, Config())
    assert {p.tag for p in after.lane_pins("dev")} == {"26.08-py3"}
    assert pins.check(after) == []
    assert git(repo, "status", "--porcelain")


# --- drifted and misconfigured variants: each must be found ---------------------------


def test_platformless_layout_drift_is_found(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(_files(DATA / "2025-10-25-9697129223"))
    _edit(repo, GITLAB, "pytorch:24.01-py3", "pytorch:24.1-py3")  # malformed LTS row
    # a second dev row without PLATFORM, drifted
    _edit(
        repo,
        GITLAB,
        "      - IMAGE: UTILITY_IMAGE",
        "      - IMAGE: CI_MCORE_DEV_IMAGE\n        FILE: Dockerfile.ci.dev\n"
        "        BASE_IMAGE: nvcr.io/nvidia/pytorch:25.08-py3\n      - IMAGE: UTILITY_IMAGE",
    )
    kinds = {(f.kind, f.lane, f.tag) for f in pins.check(scan_managed(repo, Config()))}
    assert kinds == {
        ("malformed", "lts", "24.1-py3"),
        ("platform-doubled", "dev", None),
        ("drift", "dev", "25.08-py3"),
    }


def test_lts_rows_from_the_dev_dockerfile_drift_is_found(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(_files(DATA / "2026-02-04-d959620907"))
    text = (repo / GITLAB).read_text()
    # the arm64 LTS row moves to 25.10; the amd64 one is retyped as dev (now two dev amd64 rows)
    text = text.replace(
        "IMAGE_TYPE: lts\n        BASE_IMAGE: nvcr.io/nvidia/pytorch:25.09-py3\n        PLATFORM: arm64",
        "IMAGE_TYPE: lts\n        BASE_IMAGE: nvcr.io/nvidia/pytorch:25.10-py3\n        PLATFORM: arm64",
    )
    text = text.replace("IMAGE_TYPE: lts", "IMAGE_TYPE: dev", 1)
    (repo / GITLAB).write_text(text)
    found = {(f.kind, f.lane, f.tag) for f in pins.check(scan_managed(repo, Config()))}
    assert found == {
        ("drift", "lts", "25.10-py3"),
        ("platform-missing", "lts", None),
        ("drift", "dev", "25.09-py3"),
        ("platform-doubled", "dev", None),
    }


def test_todays_layout_drift_is_found(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(_files(EXAMPLE))
    _edit(repo, "docker/Dockerfile.ci.dev", "pytorch:26.06-py3", "pytorch:26.05-py3")
    _edit(
        repo, GITLAB, "IMAGE_TYPE: dev\n        BASE_IMAGE", "IMAGE_TYPE: lts\n        BASE_IMAGE"
    )
    found = {(f.kind, f.lane, f.tag) for f in pins.check(scan_managed(repo, Config()))}
    # A Dockerfile.ci.dev row typed lts is an LTS row (the 2026 layout's form) with the dev tag.
    assert found == {
        ("drift", "dev", "26.05-py3"),
        ("platform-missing", "dev", None),
        ("drift", "lts", "26.06-py3"),
        ("platform-doubled", "lts", None),
    }


def test_unclassified_ngc_row_is_listed_by_show(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo(_files(EXAMPLE))
    _edit(repo, GITLAB, "IMAGE_TYPE: dev", "IMAGE_TYPE: nightly")
    scan = scan_managed(repo, Config())
    assert [p.line for p in scan.unclassified] == [65]
    result = run_cli("--repo", repo, "--json", "image", "show")
    assert result.code == 0, result.err
    import json

    kinds = {(p["path"], p["line"]): p["kind"] for p in json.loads(result.out)["pins"]}
    assert kinds[(GITLAB, 65)] == "unclassified"
    assert kinds[(GITLAB, 70)] == "managed"


def test_misspelt_dockerfile_is_a_finding(
    make_repo: Callable[..., Path], run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(_files(EXAMPLE))
    monkeypatch.setenv("UVDOCK_DOCKERFILE", "docker/Dockerfile.ci.dv")
    result = run_cli("--repo", repo, "image", "check")
    assert result.code == 1
    assert "docker/Dockerfile.ci.dv does not exist (set as `dockerfile`)" in result.out


@pytest.mark.parametrize(
    ("setting", "value", "path"),
    [
        ("UVDOCK_DEV_PIN_FILE", "docker/.ngc_version.devv", "docker/.ngc_version.devv"),
        ("UVDOCK_LTS_DOCKERFILE", "docker/Dockerfile.lts", "docker/Dockerfile.lts"),
        ("UVDOCK_GITLAB_BUILD_FILE", ".gitlab/build.yml", ".gitlab/build.yml"),
    ],
)
def test_every_misspelt_managed_file_is_named(
    setting: str,
    value: str,
    path: str,
    make_repo: Callable[..., Path],
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_repo(_files(EXAMPLE))
    monkeypatch.setenv(setting, value)
    result = run_cli("--repo", repo, "image", "check")
    assert result.code == 1
    assert f"{path} does not exist" in result.out


def test_a_repository_without_pins_fails_even_with_lanes_disabled(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({"README.md": "nothing pinned here\n"})
    result = run_cli("--repo", repo, "image", "check")
    assert result.code == 1
    assert "the dev lane has no managed pin" in result.out
    assert "the lts lane has no managed pin" in result.out
    # Issue 28: with both lanes switched off nothing is managed, and a check of nothing fails.
    (repo / "uvdock.toml").write_text('dev-pin-file = ""\nlts-pin-file = ""\n')
    disabled = run_cli("--repo", repo, "image", "check")
    assert disabled.code == 1
    assert "no base image is managed" in disabled.err


def test_missing_pin_file_when_the_other_lane_has_one(make_repo: Callable[..., Path]) -> None:
    files = _files(EXAMPLE)
    del files["docker/.ngc_version.dev"]
    scan = scan_managed(make_repo(files), Config())
    assert [(f.kind, f.path) for f in pins.check(scan)] == [
        ("pin-file-missing", "docker/.ngc_version.dev")
    ]


# --- the match rules themselves -------------------------------------------------------


@pytest.mark.parametrize(
    ("entries", "sets"),
    [
        (("FILE=a", "IMAGE_TYPE=dev"), ((("FILE", "a"), ("IMAGE_TYPE", "dev")),)),
        (("FILE=a",), ((("FILE", "a"),),)),
        (
            ("FILE=a, IMAGE_TYPE=dev", "FILE=b"),
            ((("FILE", "a"), ("IMAGE_TYPE", "dev")), (("FILE", "b"),)),
        ),
        (("FILE=a,IMAGE_TYPE=",), ((("FILE", "a"), ("IMAGE_TYPE", "")),)),
        ((), ()),
    ],
)
def test_match_sets_forms(entries: tuple[str, ...], sets: tuple[object, ...]) -> None:
    assert pins.match_sets(entries, "dev-matrix-match") == sets


def test_flat_list_means_all_entries(make_repo: Callable[..., Path]) -> None:
    files = _files(DATA / "2026-02-04-d959620907")
    config = Config(
        dev_matrix_match=("FILE=Dockerfile.ci.dev", "IMAGE_TYPE=dev"),
        lts_matrix_match=("FILE=Dockerfile.ci.dev", "IMAGE_TYPE=lts"),
    )
    scan = scan_managed(make_repo(files), config)
    assert pins.check(scan) == []
    assert [p.platform for p in scan.lane_pins("lts") if p.source == "gitlab"] == [
        "amd64",
        "arm64",
    ]


def test_an_entry_without_equals_is_refused(make_repo: Callable[..., Path]) -> None:
    with pytest.raises(InputRefused, match="KEY=VALUE"):
        scan_managed(make_repo({}), Config(lts_matrix_match=("FILE=a, IMAGE_TYPE",)))


def test_files_of_a_repository_at_the_filesystem_root_keep_their_first_letter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`/` ends in a separator already (a container whose repository is mounted at /)."""
    walked = [
        ("/", ["etc", ".gitlab"], []),
        ("/etc", [], ["Dockerfile"]),
        ("/.gitlab", [], ["a.yml"]),
    ]
    monkeypatch.setattr("uvdock.image.lanes.os.walk", lambda top: iter(walked))
    assert lanes.repository_files(Path("/")) == (["etc/Dockerfile"], [".gitlab/a.yml"])
