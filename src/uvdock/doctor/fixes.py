"""The words of doctor's fixes that depend on the machine: each one runnable as printed here.

Pure: doctor/checks.py finds out what this machine can do (the engine parses the
Dockerfile, the GitLab remote exists) and asks for the words.
"""

from __future__ import annotations

FORK_DOC = "docs/contributing-from-a-fork.md"


def image_ways(*, cannot_build: str, can_pull: bool, venv: str) -> str:
    """How to get the CI image: a build only where this engine can build the Dockerfile
    (`cannot_build` says why not), a pull only with the remote it pulls from, else an image
    of one's own."""
    ways = [
        w
        for w, ok in (("uvdock image build", not cannot_build), ("uvdock image pull", can_pull))
        if ok
    ]
    why = f" (no build here: {cannot_build})" if cannot_build else ""
    if not ways:
        return (
            f"an image of your own that holds uv, the venv ({venv}) and a Python satisfying "
            f"requires-python, named with --image ({FORK_DOC}){why}"
        )
    return " or ".join(ways) + f", or name one with --image ({FORK_DOC}){why}"


def network_fix(engine: str, user_config: str) -> str:
    """uv in the container cannot reach the index. An offline sync is no fix: it cannot check
    a lock and fails on an empty cache."""
    fix = "give the container a network that reaches the package index"
    if engine == "podman":
        fix += f' (rootless podman: engine-args = ["--network=host"] in {user_config})'
    return fix + ', or a proxy (engine-args = ["--env", "HTTPS_PROXY"])'
