"""A uv project whose lock is behind its wheel folder: what a weekly `uv lock --upgrade` meets.

Locked at alpha 1.0.0, gamma 1.0.0, torch 2.8.0 (a package the base image provides) and
delta 4.0.0; then alpha 1.1.0, gamma 2.0.0 and torch 2.9.0 arrive and delta 4.0.0 is
withdrawn (only 3.0.0 left): an upgrade moves two minors, a major and a downgrade.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from samples.wheels import make_wheel

DEPENDENCIES = ("alpha", "gamma", "torch", "delta")
LATER = (("alpha", "1.1.0"), ("gamma", "2.0.0"))


def make_stale(repo: Path, lock: Callable[[Path], None], held: Path) -> None:
    """`repo` (a uv project on ./wheels with DEPENDENCIES) locked, then its wheels moved on."""
    wheels = repo / "wheels"
    held.mkdir(parents=True, exist_ok=True)
    for name, version in LATER:
        target = wheels / f"{name}-{version}-py3-none-any.whl"
        target.rename(held / target.name)
    make_wheel(wheels, "torch", "2.8.0")
    make_wheel(held, "torch", "2.9.0")
    lock(repo)
    for wheel in held.iterdir():
        wheel.rename(wheels / wheel.name)
    (wheels / "delta-4.0.0-py3-none-any.whl").unlink()
    make_wheel(wheels, "delta", "3.0.0")
