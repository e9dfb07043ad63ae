"""`uvdock lts show` and `uvdock lts check`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import RunCli

REQ = "docker/lts/requirements.txt"


def test_show_real_file_table(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "lts", "show")
    assert result.code == 0, result.err
    assert "15 LTS pins" in result.out
    assert "megatron-energ" in result.out and "av_decode" in result.out
    assert result.err == ""


def test_show_json_has_one_entry_per_requirement_line(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "--json", "lts", "show")
    assert result.code == 0
    data = json.loads(result.out)
    assert [p["line"] for p in data["pins"]] == list(range(10, 25))
    first = data["pins"][0]
    assert (first["name"], first["spec"], first["version"]) == ("tqdm", "tqdm==4.67.3", "4.67.3")
    url_pin = next(p for p in data["pins"] if p["url"])
    assert url_pin["name"] == "emerging_optimizers"


def test_show_warns_about_lines_that_are_not_pins(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({REQ: "a==1\nnot valid!\n"})
    result = run_cli("--repo", repo, "lts", "show")
    assert result.code == 0
    assert "lts check" in result.err


def test_show_with_a_configured_path(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({"uvdock.toml": 'lts-requirements = "lts.txt"\n', "lts.txt": "a==1\n"})
    data = json.loads(run_cli("--repo", repo, "--json", "lts", "show").out)
    assert data["path"] == "lts.txt" and data["pins"][0]["name"] == "a"


def test_missing_file_is_exit_3(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({"README": "x"})
    result = run_cli("--repo", repo, "lts", "show")
    assert result.code == 3
    assert f"error: {REQ}" in result.err


def test_check_real_file_passes(megatron_repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", megatron_repo, "lts", "check")
    assert result.code == 0
    assert "15 exact pins, no duplicates" in result.out


def test_check_lists_every_problem_as_path_line(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({REQ: "a==1\nb>=2\nA==3\nc @ https://h/c.whl\n!!\n"})
    result = run_cli("--repo", repo, "lts", "check")
    assert result.code == 1
    lines = result.out.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [f"{REQ}:2", f"{REQ}:3", f"{REQ}:5"]
    assert "error:" in result.err and "3 problem(s)" in result.err


def test_check_json(make_repo: Callable[..., Path], run_cli: RunCli) -> None:
    repo = make_repo({REQ: "a==1\nb>=2\n"})
    result = run_cli("--repo", repo, "--json", "lts", "check")
    assert result.code == 1
    data = json.loads(result.out)
    assert data["ok"] is False and data["problems"][0]["line"] == 2


def test_show_keeps_brackets_from_the_real_file(megatron_repo: Path, run_cli: RunCli) -> None:
    """rich reads `[av_decode]` as markup unless every cell from a file is escaped."""
    result = run_cli("--repo", megatron_repo, "lts", "show")
    assert result.code == 0, result.err
    assert "was: megatron-energon[av_decode]~=6.0.1" in result.out
    lines = (megatron_repo / REQ).read_text().splitlines()
    comments = [line.split("# ", 1)[1] for line in lines[9:] if "# was:" in line]
    assert len(comments) == 7  # the lines that carry a `# was:` note
    for comment in comments:
        assert comment.strip() in result.out


def test_show_escapes_markup_and_backslashes(
    make_repo: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = make_repo({REQ: "a==1  # was: a[x]<2 [bold]loud[/bold] \\[y] [link=http://e]z\n"})
    result = run_cli("--repo", repo, "lts", "show")
    assert result.code == 0, result.err
    assert "was: a[x]<2 [bold]loud[/bold] \\[y] [link=http://e]z" in result.out
