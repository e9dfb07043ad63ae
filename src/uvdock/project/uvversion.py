"""Which uv runs, and whether it matches what the project and the host expect.

A different uv can rewrite uv.lock (its `revision`) for nothing, so a mismatch is worth a
warning before anything is locked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from uvdock.run import proc

_VERSION = re.compile(r"\buv (\d+\.\d+\.\d+\S*)")


def parse(output: str) -> str | None:
    match = _VERSION.search(output)
    return match.group(1) if match else None


def host_version(env: Mapping[str, str]) -> str | None:
    if proc.which("uv", env) is None:
        return None
    out = proc.run(["uv", "--version"], env=env, check=False)
    return parse(out.stdout) if out.ok else None


def mismatches(container: str, required: str | None, host: str | None) -> list[str]:
    problems: list[str] = []
    if required:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            spec = SpecifierSet(required if required[0] in "<>=!~" else f"=={required}")
        except InvalidSpecifier:
            problems.append(f"[tool.uv] required-version {required!r} is not a valid specifier")
        else:
            if container not in spec:
                problems.append(
                    f"the container's uv {container} does not satisfy [tool.uv] required-version {required}"
                )
    if host and host != container:
        problems.append(
            f"the host's uv is {host}, the container's is {container}: uvdock uses the container's "
            "(a different uv can rewrite uv.lock for nothing)"
        )
    return problems
