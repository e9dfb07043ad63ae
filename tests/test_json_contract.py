"""The --json contract (docs/json.md): every command prints exactly one JSON document on
stdout, `ok` says whether the exit code is 0, errors carry message/hint/exit_code, and each
command's keys and types are the ones documented (tests/samples/json_schemas.py, which a test
below keeps in step with docs/json.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import RunCli, git
from samples import json_schemas
from samples.oci_registry import Registries

DOC = Path(__file__).parents[1] / "docs" / "json.md"
GITLAB = "https://gitlab-master.example.com/ADLR/megatron-lm.git"
CASE = "gpt_16b_perf"

# (id, argv after `--repo REPO --json`, expected exit code (None: either 0 or 1), schema)
OFFLINE_CASES: list[tuple[str, tuple[str, ...], int | None, str]] = [
    ("run-dry", ("--dry-run", "run", "--", "python", "-V"), 0, ""),
    ("shell-dry", ("--dry-run", "shell"), 0, ""),
    ("add-dry", ("--dry-run", "add", "einops"), 0, ""),
    ("remove-dry", ("--dry-run", "remove", "einops"), 0, ""),
    ("lock-dry", ("--dry-run", "lock"), 0, ""),
    ("lock-check-dry", ("--dry-run", "lock", "--check"), 0, ""),
    ("sync-dry", ("--dry-run", "--container", "ci", "sync"), 0, ""),
    ("lock-resolve-dry", ("--dry-run", "lock", "resolve"), 0, "lock resolve"),
    ("lock-diff", ("lock", "diff", "HEAD", "HEAD"), 0, "lock diff"),
    ("lts-show", ("lts", "show"), 0, "lts show"),
    ("lts-check", ("lts", "check"), 0, "lts check"),
    ("lts-drift", ("lts", "drift"), 0, "lts drift"),
    ("lts-pin-dry", ("--dry-run", "lts", "pin", "einops==0.8.2", "--lts"), 0, "lts pin"),
    ("image-show", ("image", "show"), 0, "image show"),
    ("image-check", ("image", "check"), 0, "image check"),
    ("image-bump-dry", ("--dry-run", "image", "bump", "26.09-py3", "--offline"), 0, "image bump"),
    ("image-bump", ("image", "bump", "26.09-py3", "--offline"), 0, "image bump"),
    ("image-bump-noop", ("image", "bump", "26.06-py3", "--offline"), 0, "image bump"),
    # docker: podman before 5 refuses Megatron-LM's heredocs, in a dry run as in a build.
    ("image-build-dry", ("--dry-run", "--engine", "docker", "image", "build"), 0, ""),
    ("image-pull-dry", ("--dry-run", "image", "pull"), 0, ""),
    ("image-enroot-dry", ("--dry-run", "image", "enroot"), 0, ""),
    ("recipe-show", ("recipe", "show", CASE), 0, "recipe show"),
    (
        "recipe-mark-broken-dry",
        ("--dry-run", "recipe", "mark-broken", CASE, "--issue", "5", "--reason", "hangs"),
        0,
        "recipe mark-broken",
    ),
    (
        "recipe-mark-broken",
        ("recipe", "mark-broken", CASE, "--issue", "5", "--reason", "hangs"),
        0,
        "recipe mark-broken",
    ),
    ("doctor-log", ("doctor", "LOG"), 0, "doctor log"),
    (
        "merge-driver-install-dry",
        ("--dry-run", "merge-driver", "install"),
        0,
        "merge-driver install",
    ),
    ("merge-driver-install", ("merge-driver", "install", "--pyproject"), 0, "merge-driver install"),
    (
        "merge-driver-pyproject",
        ("merge-driver", "pyproject", "BASE", "OURS", "THEIRS"),
        0,
        "merge-driver pyproject",
    ),
    ("completion", ("completion", "bash"), 0, "completion"),
    ("completion-cases", ("completion", "--list-cases"), 0, "completion"),
    # errors: the error document, with the exit code the command has without --json
    ("bad-tag", ("image", "bump", "26.13"), 2, "error"),
    ("no-lts", ("lts", "pin", "einops==0.8.2"), 2, "error"),
    ("doctor", ("doctor",), None, "doctor"),
    ("unknown-command", ("imgae", "show"), 2, "error"),
    ("unknown-subcommand", ("image", "bmup"), 2, "error"),
    ("unknown-option", ("lock", "--chekc"), 2, "error"),
    ("group-alone", ("image",), 2, "error"),
    ("unknown-case", ("recipe", "show", "no_such_case"), 2, "error"),
]


def one_document(out: str) -> dict[str, Any]:
    """The whole of stdout is one JSON object."""
    document = json.loads(out)
    assert isinstance(document, dict), out
    return document


def keys_of(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(keys_of(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys_of(v) for v in value))
    return set()


def check_envelope(document: dict[str, Any], code: int) -> None:
    """The keys every document has, meaning the same everywhere."""
    assert document["ok"] is (code == 0), document
    assert document["exit_code"] == code, document
    assert isinstance(document["dry_run"], bool)
    assert isinstance(document["command"], str)
    assert "written" not in keys_of(document), document
    if "error" in document:
        assert document["ok"] is False
        assert set(document["error"]) == {"message", "hint", "exit_code"}
        assert document["error"]["exit_code"] == code


@pytest.fixture
def contract_repo(megatron_repo: Path) -> Path:
    """The Megatron-LM copy with what the commands read: a gitlab remote, a failure log and
    the three pyproject.toml versions a merge driver gets."""
    git(megatron_repo, "remote", "add", "gitlab", GITLAB)
    pyproject = (megatron_repo / "pyproject.toml").read_text()
    (megatron_repo / "LOG").write_text("ModuleNotFoundError: No module named 'einops'\n")
    for name in ("BASE", "OURS", "THEIRS"):
        (megatron_repo / name).write_text(pyproject)
    return megatron_repo


@pytest.mark.parametrize(
    ("argv", "expected", "schema"),
    [c[1:] for c in OFFLINE_CASES],
    ids=[c[0] for c in OFFLINE_CASES],
)
def test_every_command_prints_one_documented_document(
    contract_repo: Path,
    run_cli: RunCli,
    argv: tuple[str, ...],
    expected: int | None,
    schema: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(contract_repo)
    result = run_cli("--repo", contract_repo, "--engine", "podman", "--json", *argv)
    if expected is None:
        assert result.code in (0, 1), result.err
    else:
        assert result.code == expected, result.err
    document = one_document(result.out)
    check_envelope(document, result.code)
    json_schemas.check(document)
    if document["command"]:
        assert " ".join(argv).find(document["command"]) >= 0, document["command"]


def test_outside_a_repository_is_the_error_document_exit_3(tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", tmp_path, "--json", "image", "show")
    assert result.code == 3, result.err
    document = one_document(result.out)
    check_envelope(document, 3)
    json_schemas.check(document)
    assert "not inside a git repository" in document["error"]["message"]


def test_a_failed_check_is_one_document_with_its_findings(
    contract_repo: Path, run_cli: RunCli
) -> None:
    requirements = contract_repo / "docker" / "lts" / "requirements.txt"
    requirements.write_text(requirements.read_text() + "einops>=0.8\n")
    result = run_cli("--repo", contract_repo, "--json", "lts", "check")
    assert result.code == 1, result.err
    document = one_document(result.out)
    check_envelope(document, 1)
    json_schemas.check(document)
    assert document["problems"] and document["error"]["exit_code"] == 1


def test_recipe_unmark_after_mark_broken(contract_repo: Path, run_cli: RunCli) -> None:
    marked = run_cli(
        "--repo", contract_repo, "recipe", "mark-broken", CASE, "--issue", "5", "--reason", "x"
    )
    assert marked.code == 0, marked.err
    for dry in (("--dry-run",), ()):
        result = run_cli("--repo", contract_repo, "--json", *dry, "recipe", "unmark", CASE)
        assert result.code == 0, result.err
        document = one_document(result.out)
        check_envelope(document, 0)
        json_schemas.check(document)
        assert document["dry_run"] is bool(dry) and document["changes"]


# -- a real registry: image tags and image bump --latest ------------------------------------


@pytest.mark.engine
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("image", "tags"), 0),
        (("image", "tags", "--limit", "2"), 0),
        (("image", "bump", "--latest"), 0),
        (("--dry-run", "image", "bump", "--latest", "--pr-body"), 0),
        (("image", "bump", "26.09-py3"), 0),
        (("image", "bump", "26.08-py3"), 2),  # not in the registry
        (("image", "bump", "26.10-py3"), 2),  # not published for every platform
    ],
    ids=[
        "tags",
        "tags-limit",
        "bump-latest",
        "bump-latest-dry-pr-body",
        "bump",
        "missing",
        "one-platform",
    ],
)
def test_registry_commands(
    megatron_repo: Path,
    run_cli: RunCli,
    registry: Registries,
    argv: tuple[str, ...],
    expected: int,
) -> None:
    result = run_cli("--repo", megatron_repo, "--json", *argv)
    assert result.code == expected, result.err
    document = one_document(result.out)
    check_envelope(document, expected)
    json_schemas.check(document)


# -- real runs in the podman test image -----------------------------------------------------


@pytest.mark.engine
def test_real_container_runs(
    engine_image: str, uv_project: Callable[..., Path], run_cli: RunCli
) -> None:
    repo = uv_project(("alpha",))
    podman = ("--repo", repo, "--engine", "podman", "--image", engine_image, "--json")
    runs: list[tuple[tuple[str, ...], int]] = [
        (("lock",), 0),  # writes uv.lock: everything added
        (("lock",), 0),  # unchanged
        (("lock", "--check"), 0),
        (("run", "--", "sh", "-c", "exit 3"), 3),  # the command's exit code, ok false
        (("run", "--", "true"), 0),
    ]
    documents = []
    for argv, expected in runs:
        result = run_cli(*podman, *argv)
        assert result.code == expected, (argv, result.err)
        document = one_document(result.out)
        check_envelope(document, expected)
        json_schemas.check(document)
        documents.append(document)
    assert documents[0]["lock_changed"] is True and documents[0]["added"]
    assert documents[1]["lock_changed"] is False and documents[1]["added"] == []
    pyproject = repo / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text.replace('["alpha"]', '["alpha", "gamma"]'))
    stale = run_cli(*podman, "lock", "--check")
    assert stale.code == 1
    document = one_document(stale.out)
    check_envelope(document, 1)
    assert "out of date" in document["error"]["message"]
    pyproject.write_text(text)
    for verb, key in (("add", "added"), ("remove", "removed")):
        result = run_cli(*podman, verb, "gamma")
        assert result.code == 0, result.err
        document = one_document(result.out)
        check_envelope(document, 0)
        json_schemas.check(document)
        assert [entry["name"] for entry in document[key]] == ["gamma"]


@pytest.mark.engine
def test_what_the_container_prints_stays_off_the_document(
    engine_image: str, megatron_repo: Path
) -> None:
    """A real process: the command's own stdout goes to stderr, stdout is the document."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "uvdock", "--repo", str(megatron_repo), "--json",
         "--engine", "podman", "--image", engine_image, "run", "--", "echo", "from-the-container"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = one_document(done.stdout)
    check_envelope(document, 0)
    assert "from-the-container" in done.stderr


# -- docs/json.md lists exactly the documented keys ------------------------------------------


def documented_keys() -> dict[str, list[str]]:
    """Each command section's key table (first column, in backticks)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in DOC.read_text().splitlines():
        if line.startswith("### `"):
            name = line[len("### `") :].split("`")[0]
            current = sections.setdefault(name, [])
        elif line.startswith("## "):
            current = None
        elif current is not None and line.startswith("| `"):
            current.append(line.split("`")[1])
    return sections


def test_docs_list_every_command_and_its_keys() -> None:
    documented = documented_keys()
    assert set(documented) == {"(every document)", *json_schemas.SCHEMAS} - {""}
    assert documented["(every document)"] == json_schemas.flat_keys(json_schemas.ENVELOPE)
    for command, schema in json_schemas.SCHEMAS.items():
        if command:
            assert documented[command] == json_schemas.flat_keys(schema), command


def test_every_command_has_a_schema() -> None:
    from uvdock.cli.spec import COMMANDS

    names = {" ".join(part for part in key if part) for key in COMMANDS}
    assert names == set(json_schemas.SCHEMAS) - {""}


@pytest.mark.engine
def test_lock_resolve_of_a_real_conflict(
    engine_image: str, wheelhouse: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    from samples.lock_conflicts import make_conflict

    conflict = make_conflict(tmp_path, wheelhouse, "rebase")
    podman = ("--repo", conflict.repo, "--engine", "podman", "--image", engine_image, "--json")
    resolve = ("lock", "resolve", "--onto", "main", "--no-fetch")
    for dry in (("--dry-run",), ()):
        result = run_cli(*podman, *dry, *resolve)
        assert result.code == 0, result.err
        document = one_document(result.out)
        check_envelope(document, 0)
        json_schemas.check(document)
        assert document["conflict"] is True and document["ref"] == "main"
    assert document["resolved"] is True and document["operation"] == "rebase"
    assert {entry["name"] for entry in document["diff"]["added"]} <= {"alpha", "beta", "delta"}


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (("lock", "--chekc"), "lock"),
        (("image", "bump"), "image bump"),
        (("imgae",), ""),
        (("image", "-q", "-v", "show"), "image show"),
    ],
)
def test_a_refused_command_line_names_the_command_it_understood(
    contract_repo: Path, run_cli: RunCli, argv: tuple[str, ...], command: str
) -> None:
    result = run_cli("--repo", contract_repo, "--json", *argv)
    assert result.code == 2, result.err
    document = one_document(result.out)
    check_envelope(document, 2)
    assert document["command"] == command


@pytest.mark.parametrize(
    "argv",
    [("run", "--", "python", "-V"), ("shell",), ("add", "einops"), ("lock",)],
    ids=lambda argv: argv[0],
)
def test_container_dry_runs_name_the_placement(
    contract_repo: Path, run_cli: RunCli, argv: tuple[str, ...]
) -> None:
    options = ("--engine", "podman", "--image", "localhost/uvdock-test:bookworm", "--json")
    result = run_cli("--repo", contract_repo, *options, "--dry-run", *argv)
    assert result.code == 0, result.err
    planned = one_document(result.out)["planned"]
    container_runs = [p for p in planned if p["argv"][0] == "podman"]
    assert container_runs, planned
    for step in container_runs:
        assert step["placement"] is not None, step
        assert step["placement"]["mode"] == "run"
        assert step["placement"]["image"] == "localhost/uvdock-test:bookworm"
