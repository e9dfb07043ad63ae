"""`uvdock add` accepts every valid requirement and hands it to uv unchanged (issue 11 §3).

Nothing goes through a shell, so `<`, `>`, `;`, quotes and spaces are legal; only words that
uv would read as options and URLs carrying credentials are refused.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli

SPECS = (
    "numpy>=2",
    "numpy<2.3",
    "numpy>2,<3",
    'requests[socks]>=2.31; python_version < "3.13"',
    "einops~=0.8",
    "torch!=2.1.0",
    "packaging>=23,!=23.1",
    "pydantic>=2.0,<3",
    'nvidia-modelopt[torch]>=0.19.0; sys_platform != "darwin"',
    "flask[async,dotenv]==3.0.3",
    "tqdm",
    "PyYAML==6.0.2",
    "typing_extensions>=4.12; python_version < '3.11'",
    'zarr ; platform_machine == "x86_64"',
    'opencv-python-headless>=4.8,<5; platform_system == "Linux"',
    "transformer-engine[pytorch]>=2.1.0a0",
    "mamba-ssm~=2.2",
    "causal-conv1d>=1.4,<2",
    "triton==3.1.0; platform_machine=='x86_64' and sys_platform=='linux'",
    "flash-attn==2.7.4.post1",
    "datasets (>=2.0,<3)",
    "setuptools<82.0.0",
    "jet-client~=4.0",
    "wandb>=0.19,!=0.19.2",
    "megatron-core[dev,mlm]>=0.12.0rc1",
    "torch>=2.4 ; python_version >= '3.10' and (sys_platform == 'linux' or sys_platform == 'win32')",
    "nemo_run @ git+https://github.com/NVIDIA/NeMo-Run.git@v0.4.0",
    "transformer_engine @ git+https://github.com/NVIDIA/TransformerEngine.git@release_v2.4",
    "flash_mla @ git+https://github.com/deepseek-ai/FlashMLA.git@5e4fce5",
    "pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee9982d4bbb3c72346a6de940a148ea686",
    "alpha @ file:///workspace/wheels/alpha-1.0.0-py3-none-any.whl",
    "git+https://github.com/NVIDIA/NeMo-Run.git@v0.4.0",
    "https://files.example.org/pkgs/demo-1.0-py3-none-any.whl",
    "./wheels/alpha-1.0.0-py3-none-any.whl",
    "../sibling/pkg",
    "/opt/src/pkg",
)


@pytest.fixture
def repo(uv_project: Callable[..., Path]) -> Path:
    return uv_project(("alpha",), extras={"lts": []}, groups={"test": ["gamma"]})


def _uv_words(out: str) -> list[str]:
    line = next(line for line in out.splitlines() if " uv add " in line)
    argv = shlex.split(line)
    return argv[argv.index("uv") :]


@pytest.mark.parametrize("spec", SPECS)
def test_valid_spec_reaches_uv_unchanged(repo: Path, run_cli: RunCli, spec: str) -> None:
    result = run_cli("--repo", repo, "--dry-run", "--engine", "podman", "add", spec)
    assert result.code == 0, result.err
    assert _uv_words(result.out) == ["uv", "add", "--no-sync", spec]


def test_several_specs_and_a_group_keep_their_order(repo: Path, run_cli: RunCli) -> None:
    specs = ["numpy>=2", 'requests[socks]>=2.31; python_version < "3.13"', "einops~=0.8"]
    result = run_cli(
        "--repo", repo, "--dry-run", "--engine", "podman", "add", "--group", "test", *specs
    )
    assert result.code == 0, result.err
    assert _uv_words(result.out) == ["uv", "add", "--no-sync", "--group", "test", *specs]


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("--index-url=https://evil.example/simple", "would read it as an option"),
        ("-e.", "would read it as an option"),
        ("https://user:hunter2-secret@files.example.org/x-1.0-py3-none-any.whl", "credentials"),
        ("demo @ https://ghp_abcdefghijklmnop@github.com/o/r/archive/v1.zip", "credentials"),
        ("demo @ git+https://oauth2:glpat-xxxxxxxx@gitlab.example.com/o/r.git", "credentials"),
        ("<2.3", "not a valid requirement"),
        ("numpy>=2 garbage", "not a valid requirement"),
    ],
)
def test_refused_specs(repo: Path, run_cli: RunCli, spec: str, reason: str) -> None:
    before = (repo / "pyproject.toml").read_bytes()
    result = run_cli("--repo", repo, "--dry-run", "--engine", "podman", "add", "--", spec)
    assert result.code == 2, result.out
    assert reason in result.err
    assert "hunter2" not in result.err and "ghp_abcdefghijklmnop" not in result.err
    assert (repo / "pyproject.toml").read_bytes() == before


def test_add_to_the_lts_extra_points_to_lts_pin(repo: Path, run_cli: RunCli) -> None:
    before = (repo / "pyproject.toml").read_bytes()
    result = run_cli("--repo", repo, "--engine", "podman", "add", "--optional", "lts", "tqdm")
    assert result.code == 2
    assert "uvdock lts pin" in result.err
    assert (repo / "pyproject.toml").read_bytes() == before


def test_remove_still_takes_names_only(repo: Path, run_cli: RunCli) -> None:
    result = run_cli("--repo", repo, "--dry-run", "--engine", "podman", "remove", "numpy>=2")
    assert result.code == 2
    assert "names only" in result.err
