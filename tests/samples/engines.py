"""Fake engine binaries for argv-shape tests: they record how they were called, nothing more."""

from __future__ import annotations

from pathlib import Path

import pytest


def fake_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, rc: int = 0) -> Path:
    """An executable `name` on PATH that records its argv (one shlex line per call)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / f"{name}.calls"
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\necho "$PWD $*" >> {log}\nexit {rc}\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return log
