"""Small pyproject.toml texts the tests share."""

from __future__ import annotations


def pyproject_requiring_uv(required: str) -> str:
    """A dependency-free project whose `[tool.uv] required-version` is `required`."""
    return (
        '[project]\nname = "demo"\nversion = "0.1"\nrequires-python = ">=3.11"\n'
        f'dependencies = []\n\n[tool.uv]\nrequired-version = "{required}"\n'
    )
