"""Run the shell of the CI recipes in docs/ci/ (GitHub `run:` steps, GitLab `script:` lines)
as the runners do, with real uvdock on PATH, for tests/test_ci_recipes.py.

GitHub: every `run:` step of a job in order, each in `bash --noprofile --norc -eo pipefail`
(the workflows set `shell: bash`), with the workflow's, the job's and the step's `env:`;
`${{ ... }}` in env values comes from the test's `expressions`; GITHUB_OUTPUT is a file, and
a step's `if: steps.ID.outputs.NAME != ''` is evaluated from it. `uses:` steps (checkout,
create-pull-request) are not run: the test checks what they would be handed. GitLab: the
job's `script:` lines as one `bash -eo pipefail` script (GitLab's runner does the same) with
the job's `variables:` expanded. The steps named "Install uvdock" and `before_script` install
uvdock from a registry and are skipped: the uvdock under test is put first on PATH.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import yaml

DOCS = Path(__file__).resolve().parents[2] / "docs"
INSTALL_STEP = "Install uvdock"
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_OUTPUT_TEST = re.compile(r"^steps\.([\w-]+)\.outputs\.([\w-]+) != ''$")
_VARIABLE = re.compile(r"\$\{?(\w+)\}?")


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), path
    return data


def base_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The test process's environment, uvdock's venv first on PATH, plus `extra`."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


@dataclass
class StepRun:
    name: str
    code: int
    stdout: str
    stderr: str


@dataclass
class JobRun:
    steps: list[StepRun] = field(default_factory=list)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def code(self) -> int:
        return self.steps[-1].code if self.steps else 0


def _substitute(value: object, expressions: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        assert match[1] in expressions, f"the test gives no value for ${{{{ {match[1]} }}}}"
        return expressions[match[1]]

    return _EXPRESSION.sub(one, str(value))


def _outputs(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {key: value for key, value in pairs}


def _wanted(step: Mapping[str, Any], outputs: Mapping[str, Mapping[str, str]]) -> bool:
    condition = step.get("if")
    if condition is None:
        return True
    match = _OUTPUT_TEST.match(str(condition).strip())
    assert match, f"the harness reads only `steps.ID.outputs.NAME != ''`, not {condition!r}"
    return outputs.get(match[1], {}).get(match[2], "") != ""


def run_github_job(
    workflow: Path,
    job: str,
    cwd: Path,
    env: Mapping[str, str],
    expressions: Mapping[str, str],
    overrides: Mapping[str, str] = {},
) -> JobRun:
    """Every `run:` step of `job` until one fails; `overrides` win over the YAML's env."""
    data = load(workflow)
    spec = data["jobs"][job]
    assert data["defaults"]["run"]["shell"] == "bash"
    result = JobRun()
    temp = Path(env["RUNNER_TEMP"])
    for index, step in enumerate(spec["steps"]):
        if (
            "run" not in step
            or step.get("name") == INSTALL_STEP
            or not _wanted(step, result.outputs)
        ):
            continue
        assert "${{" not in step["run"], f"{step.get('name')}: an expression in run: (injection)"
        output = temp / f"github-output-{index}"
        output.write_text("")
        step_env = dict(env)
        for scope in (data.get("env", {}), spec.get("env", {}), step.get("env", {})):
            step_env.update({k: _substitute(v, expressions) for k, v in scope.items()})
        step_env.update(overrides)
        step_env["GITHUB_OUTPUT"] = str(output)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=cwd, env=step_env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        result.steps.append(
            StepRun(step.get("name", ""), done.returncode, done.stdout, done.stderr)
        )
        if "id" in step:
            result.outputs[step["id"]] = _outputs(output)
        if done.returncode != 0:
            break
    return result


def expand(value: str, env: Mapping[str, str]) -> str:
    """GitLab's expansion of `$VAR` / `${VAR}` in a variable's value (unknown: empty)."""
    return _VARIABLE.sub(lambda m: env.get(m[1], ""), value)


def run_gitlab_job(
    path: Path, job: str, cwd: Path, env: Mapping[str, str], overrides: Mapping[str, str] = {}
) -> StepRun:
    spec = load(path)[job]
    job_env = dict(env)
    for key, value in spec.get("variables", {}).items():
        job_env[key] = expand(str(value), job_env)
    job_env.update(overrides)
    script = "\n".join(spec["script"])
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=cwd, env=job_env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return StepRun(job, done.returncode, done.stdout, done.stderr)


def shell_blocks() -> list[tuple[str, str]]:
    """(where, shell text) of every run: step and every GitLab script, as bash would read it."""
    blocks: list[tuple[str, str]] = []
    for path in sorted((DOCS / "ci" / "github").glob("*.yml")):
        for name, job in load(path)["jobs"].items():
            for step in job["steps"]:
                if "run" in step:
                    blocks.append((f"{path.name}:{name}:{step.get('name', '')}", step["run"]))
    for path in sorted((DOCS / "ci" / "gitlab").glob("*.yml")):
        for name, job in load(path).items():
            for part in ("before_script", "script"):
                if part in job:
                    blocks.append((f"{path.name}:{name}:{part}", "\n".join(job[part])))
    return blocks


class MergeRequests:
    """GitLab's `POST /projects/:id/merge_requests` on loopback, as GitLab answers it: 201
    with the new merge request, 409 while one for the same source branch is open."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.created: list[dict[str, str]] = []
        self.statuses: list[int] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if self.headers.get("PRIVATE-TOKEN") != owner.token:
                    status, body = 401, "401 Unauthorized"
                elif any(m["source_branch"] == form.get("source_branch") for m in owner.created):
                    status, body = 409, "Another open merge request already exists"
                else:
                    owner.created.append({**form, "path": self.path})
                    status, body = 201, f"merge request !{len(owner.created)}"
                owner.statuses.append(status)
                data = json.dumps({"message": body}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.api = f"http://127.0.0.1:{self.server.server_address[1]}/api/v4"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
