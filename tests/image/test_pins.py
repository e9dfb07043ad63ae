"""pins, pins_gitlab, pins_tags: finding, classifying and checking base-image pins.

The pin files and build matrices come from tests/samples/pins.py, shared with the command tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from samples.pins import DEV, build_yml, dev_row, lts_row, pin_files, standard_rows

from uvdock.config.settings import Config
from uvdock.errors import InputRefused
from uvdock.image import pins
from uvdock.image.gitlab import sequence_items
from uvdock.image.scan import scan_managed
from uvdock.registry.tags import PREFIX, parse_tag_argument, tag_key
from uvdock.run import git


def locations(found: Sequence[pins.Pin], lane: str | None = None) -> list[str]:
    return [p.location for p in found if lane is None or p.lane == lane]


# --- tags -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "tag"),
    [("26.04-py3", "26.04-py3"), (" 25.12-py3 ", "25.12-py3"), (f"{DEV}", "26.06-py3")],
)
def test_tag_arguments_accepted(given: str, tag: str) -> None:
    assert parse_tag_argument(given) == tag


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("26.9-py3", "did you mean `26.09-py3`?"),
        ("26.09", "did you mean `26.09-py3`?"),
        ("2026.04-py3", "did you mean `26.04-py3`?"),
        ("26.13-py3", "NGC PyTorch tags look like 26.04-py3"),
        ("26.00-py3", "NGC PyTorch tags look like 26.04-py3"),
        ("latest", "NGC PyTorch tags look like 26.04-py3"),
        ("python:3.10", "give a tag like 26.04-py3"),
        ("nvcr.io/nvidian/nemo:26.09-py3", "give a tag like 26.04-py3"),
        ("nvcr.io/nvidia/pytorch:26.9-py3", "did you mean `26.09-py3`?"),
    ],
)
def test_tag_arguments_refused_with_hint(given: str, hint: str) -> None:
    with pytest.raises(InputRefused) as caught:
        parse_tag_argument(given)
    assert caught.value.exit_code == 2
    assert caught.value.hint is not None and hint in caught.value.hint


def test_month_out_of_range_is_named() -> None:
    with pytest.raises(InputRefused, match="month 13 is not 01-12"):
        parse_tag_argument("26.13-py3")


def test_tags_order_by_year_then_month() -> None:
    assert tag_key("25.12-py3") < tag_key("26.01-py3") < tag_key("26.10-py3")


# --- the YAML row scanner ---------------------------------------------------------------


def test_scanner_spans_cover_exactly_the_values() -> None:
    text = build_yml([dev_row("amd64")], quotes=("'", '"', ""), comments=True, eol="\r\n")
    (item,) = [i for i in sequence_items(text) if "BASE_IMAGE" in i.fields]
    assert {k: s.value for k, s in item.fields.items()} == dict(dev_row("amd64"))
    for scalar in item.fields.values():
        assert text[scalar.start : scalar.end] == scalar.value
        line = text.split("\n")[scalar.line - 1]
        assert scalar.value in line


def test_scanner_reads_single_quote_escapes_and_keeps_nested_keys_out() -> None:
    text = (
        "jobs:\n"
        "- NAME: 'it''s'\n"
        "  nested:\n"
        "    FILE: Dockerfile.ci.dev\n"
        "  BASE_IMAGE: x # trailing\n"
        "- FILE: other\n"
    )
    first, second = sequence_items(text)
    assert first.fields["NAME"].value == "it's"
    assert "FILE" not in first.fields  # nested one level deeper: not this item's key
    assert first.fields["BASE_IMAGE"].value == "x"
    assert second.fields["FILE"].value == "other"


# --- managed pins -----------------------------------------------------------------------


def test_real_megatron_pins(megatron_repo: Path) -> None:
    scan = scan_managed(megatron_repo, Config())
    assert locations(scan.pins, "dev") == [
        ".gitlab/stages/01.build.yml:65",
        ".gitlab/stages/01.build.yml:70",
        "docker/.ngc_version.dev:1",
        "docker/Dockerfile.ci.dev:4",
    ]
    assert locations(scan.pins, "lts") == [
        ".gitlab/stages/01.build.yml:56",
        ".gitlab/stages/01.build.yml:60",
        "docker/.ngc_version.lts:1",
    ]
    assert {p.tag for p in scan.lane_pins("dev")} == {"26.06-py3"}
    assert {p.tag for p in scan.lane_pins("lts")} == {"25.09-py3"}
    assert pins.check(scan) == []


VARIANTS: dict[str, Callable[[], str]] = {
    "reordered keys": lambda: build_yml([list(reversed(row)) for row in standard_rows()]),
    "quoted values": lambda: build_yml(standard_rows(), quotes=("'", '"')),
    "comments": lambda: build_yml(standard_rows(), comments=True),
    "4-space indentation": lambda: build_yml(standard_rows(), indent=8, step=4),
    "no indentation": lambda: build_yml(standard_rows(), indent=4, step=2),
    "CRLF": lambda: build_yml(standard_rows(), eol="\r\n", quotes=("", '"'), comments=True),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variants_find_the_same_rows(make_repo: Callable[..., Path], variant: str) -> None:
    repo = make_repo(pin_files(VARIANTS[variant]()))
    scan = scan_managed(repo, Config())
    gitlab = [p for p in scan.pins if p.source == "gitlab"]
    assert [(p.lane, p.platform, p.tag) for p in gitlab] == [
        ("lts", "amd64", "25.09-py3"),
        ("lts", "arm64", "25.09-py3"),
        ("dev", "amd64", "26.06-py3"),
        ("dev", "arm64", "26.06-py3"),
    ]
    text = scan.texts[".gitlab/stages/01.build.yml"]
    for pin in gitlab:
        assert text[pin.start : pin.end] == pin.value
        assert pin.value in text.split("\n")[pin.line - 1]
    assert pins.check(scan) == []


def test_a_row_needs_every_entry_of_one_alternative(make_repo: Callable[..., Path]) -> None:
    rows = [
        # IMAGE_TYPE alone, or FILE with another lane's IMAGE_TYPE, selects no lane any more.
        [("IMAGE_TYPE", "dev"), ("BASE_IMAGE", DEV), ("PLATFORM", "amd64")],
        [("FILE", "Dockerfile.ci.lts"), ("IMAGE_TYPE", "dev"), ("BASE_IMAGE", DEV)],
        dev_row("amd64"),
        dev_row("arm64"),
        lts_row("amd64"),
        lts_row("arm64"),
    ]
    scan = scan_managed(make_repo(pin_files(build_yml(rows))), Config())
    assert [p.platform for p in scan.lane_pins("dev") if p.source == "gitlab"] == ["amd64", "arm64"]
    assert [p.line for p in scan.unclassified] == [6, 10]
    assert pins.check(scan) == []


def test_missing_and_doubled_platform_rows(make_repo: Callable[..., Path]) -> None:
    rows = [lts_row("amd64"), lts_row("amd64"), dev_row("amd64")]
    scan = scan_managed(make_repo(pin_files(build_yml(rows))), Config())
    found = {(f.kind, f.lane, f.location) for f in pins.check(scan)}
    assert found == {
        ("platform-doubled", "lts", ".gitlab/stages/01.build.yml:9"),
        ("platform-missing", "lts", ".gitlab/stages/01.build.yml:5"),
        ("platform-missing", "dev", ".gitlab/stages/01.build.yml:13"),
    }


def test_bare_arg_is_no_pin_and_no_error(make_repo: Callable[..., Path]) -> None:
    files = pin_files(dev_dockerfile="ARG FROM_IMAGE_NAME\nFROM ${FROM_IMAGE_NAME}\n")
    scan = scan_managed(make_repo(files), Config())
    assert [p for p in scan.pins if p.source == "dockerfile"] == []
    assert pins.check(scan) == []


def test_quoted_dockerfile_default_is_a_pin(make_repo: Callable[..., Path]) -> None:
    files = pin_files(dev_dockerfile=f'ARG FROM_IMAGE_NAME="{DEV}"\nFROM ${{FROM_IMAGE_NAME}}\n')
    scan = scan_managed(make_repo(files), Config())
    (pin,) = [p for p in scan.pins if p.source == "dockerfile"]
    assert (pin.location, pin.value) == ("docker/Dockerfile.ci.dev:1", DEV)


def test_drift_and_malformed_findings_name_path_line_tag_expected(
    make_repo: Callable[..., Path],
) -> None:
    rows = standard_rows()
    rows[3] = dev_row("arm64", "nvcr.io/nvidia/pytorch:26.04-py3")
    rows[0] = lts_row("amd64", "nvcr.io/nvidia/pytorch:25.9-py3")
    scan = scan_managed(make_repo(pin_files(build_yml(rows))), Config())
    findings = pins.check(scan)
    assert [(f.kind, f.location, f.tag, f.expected) for f in findings] == [
        ("drift", ".gitlab/stages/01.build.yml:21", "26.04-py3", "26.06-py3"),
        ("malformed", ".gitlab/stages/01.build.yml:7", "25.9-py3", "25.09-py3"),
    ]


def test_pin_file_without_final_newline_and_with_blank_lead(make_repo: Callable[..., Path]) -> None:
    files = pin_files(dev_pin="\n" + DEV)
    scan = scan_managed(make_repo(files), Config())
    pin = scan.pin_file("dev")
    assert pin is not None and (pin.line, pin.tag) == (2, "26.06-py3")


def test_configured_paths_and_lane_rules(make_repo: Callable[..., Path]) -> None:
    rows = [
        [("FLAVOR", "nightly"), ("BASE_IMAGE", DEV), ("PLATFORM", "amd64")],
        [("FLAVOR", "nightly"), ("BASE_IMAGE", DEV), ("PLATFORM", "arm64")],
    ]
    repo = make_repo({"ci/pin.txt": DEV, "ci/build.yml": build_yml(rows)})
    config = Config(
        dev_pin_file="ci/pin.txt",
        gitlab_build_file="ci/build.yml",
        dev_matrix_match=("FLAVOR=nightly",),
        lts_pin_file="",  # no LTS lane in this repository
    )
    scan = scan_managed(repo, config)
    assert locations(scan.pins, "dev") == ["ci/build.yml:6", "ci/build.yml:9", "ci/pin.txt:1"]
    assert scan.lane_pins("lts") == []
    assert pins.check(scan) == []


def test_bad_matrix_match_config_is_refused(make_repo: Callable[..., Path]) -> None:
    with pytest.raises(InputRefused, match="KEY=VALUE"):
        scan_managed(make_repo(pin_files()), Config(dev_matrix_match=("IMAGE_TYPE",)))


# --- informational mentions -------------------------------------------------------------


def test_mentions_are_tracked_non_managed_pytorch_references(
    make_repo: Callable[..., Path],
) -> None:
    files = pin_files()
    files[".github/workflows/ci.yml"] = (
        "jobs:\n  test:\n    container: nvcr.io/nvidia/pytorch:25.04-py3\n"
        "    services: {db: python:3.10}\n"
    )
    files["docs/setup.md"] = (
        "Run `docker run nvcr.io/nvidia/pytorch:<YY.MM>-py3` first.\n"
        "Any nvcr.io/nvidia/pytorch:YY.MM-py3 works, e.g. nvcr.io/nvidia/pytorch:xx.xx-py3.\n"
        "Pull nvcr.io/nvidia/pytorch:25.04-py3 (`docker pull nvcr.io/nvidia/pytorch:25.04-py3`)\n"
        "Built from nvcr.io/nvidia/pytorch:${BASE_TAG}.\n"
    )
    files["examples/other.Dockerfile"] = "FROM nvcr.io/nvidian/nemo:nightly\n"
    repo = make_repo(files)
    (repo / "untracked.txt").write_text("nvcr.io/nvidia/pytorch:20.01-py3\n")
    found = pins.all_pins(scan_managed(repo, Config()).pins, git.grep_files(repo, PREFIX))
    informational = [(p.location, p.tag) for p in found if not p.managed]
    # Placeholders of the docs are no pins; a line naming one tag twice is one mention; a
    # variable is a real reference whose value lives elsewhere.
    assert informational == [
        (".github/workflows/ci.yml:3", "25.04-py3"),
        ("docs/setup.md:3", "25.04-py3"),
        ("docs/setup.md:4", "${BASE_TAG}"),
    ]
    assert all(p.lane is None for p in found if not p.managed)
    assert len([p for p in found if p.managed]) == 7
