"""Tiny, valid wheels written by hand, so resolution tests run offline in milliseconds.

One wheel set serves every test: the `wheelhouse` fixture (tests/conftest.py) builds it once
per session; uv projects and the uv.lock conflicts copy it into their repository.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Sequence
from pathlib import Path


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(folder: Path, name: str, version: str, requires: Sequence[str] = ()) -> Path:
    module = name.replace("-", "_")
    dist_info = f"{module}-{version}.dist-info"
    metadata = (
        "\n".join(
            ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
            + [f"Requires-Dist: {r}" for r in requires]
        )
        + "\n"
    )
    files = {
        f"{module}/__init__.py": f"VERSION = {version!r}\n".encode(),
        f"{dist_info}/METADATA": metadata.encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: uvdock-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [_record_line(path, data) for path, data in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for arc, data in files.items():
            zf.writestr(arc, data)
    return path


WHEELS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("alpha", "1.0.0", ()),
    ("alpha", "1.1.0", ()),
    ("beta", "2.0.0", ("alpha>=1.0",)),
    ("gamma", "0.3.0", ()),
    ("gamma", "1.0.0", ()),
    ("gamma", "2.0.0", ()),
    ("delta", "4.0.0", ()),
    # Two packages that cannot be locked together: a conflict uv reports, not a merge one.
    ("lowpin", "1.0.0", ("gamma<2",)),
    ("highpin", "1.0.0", ("gamma>=2",)),
)


def build_wheelhouse(folder: Path) -> Path:
    for name, version, requires in WHEELS:
        make_wheel(folder, name, version, requires)
    return folder


def project_pyproject(
    dependencies: Sequence[str] = (),
    *,
    extras: dict[str, list[str]] | None = None,
    groups: dict[str, list[str]] | None = None,
) -> str:
    """A pyproject.toml resolving only from ./wheels (inside the repo, so a container sees it)."""
    deps = ", ".join(f'"{d}"' for d in dependencies)
    lines = [
        "[project]",
        'name = "demo"',
        'version = "0.1.0"',
        'requires-python = ">=3.11"',
        f"dependencies = [{deps}]",
        "",
    ]
    if extras:
        lines.append("[project.optional-dependencies]")
        lines += [f"{k} = [{', '.join(repr(v) for v in vs)}]" for k, vs in extras.items()]
        lines.append("")
    if groups:
        lines.append("[dependency-groups]")
        lines += [f"{k} = [{', '.join(repr(v) for v in vs)}]" for k, vs in groups.items()]
        lines.append("")
    lines += ["[tool.uv]", "no-index = true", 'find-links = ["wheels"]', "package = false", ""]
    return "\n".join(lines).replace("'", '"')
