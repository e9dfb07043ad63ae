"""An image build's engine steps. Whether the builder (podman's buildah, docker's BuildKit, or
podman behind the docker CLI, asked read-only) can parse the Dockerfile's heredocs
(image/heredoc.py), asked first, rather than failing minutes in as `Unknown instruction:
"APT-GET"`. The steps (build, pull) run with the terminal attached and no spinner of ours: the
child draws its own progress (BuildKit, buildah, layer bars), which a status line would garble."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from uvdock.errors import CommandFailed, EnvironmentUnusable
from uvdock.files import textlines
from uvdock.image import heredoc
from uvdock.image.heredoc import Builder
from uvdock.run import probe, proc

if TYPE_CHECKING:
    from uvdock.context import Context
    from uvdock.image.heredoc import Verdict


def build_refusal(ctx: Context, engine: str, dockerfile: str) -> Verdict | None:
    """None when the engine can build it, or the file has no heredoc or cannot be read."""
    try:
        text = textlines.read_text(ctx.repo / dockerfile, errors="replace", newlines=True)
    except OSError:
        return None
    line = heredoc.first_heredoc(text)
    return None if line is None else heredoc.verdict(builder(engine, ctx.env), dockerfile, line)


def check_heredocs(ctx: Context, engine: str, dockerfile: str) -> None:
    """Refuse (exit 3) a build the engine cannot parse; warn where it works only here."""
    found = build_refusal(ctx, engine, dockerfile)
    if found is not None and found.refuse:
        raise EnvironmentUnusable(found.message, hint=f"what works: {heredoc.WHAT_WORKS}")
    if found is not None:
        ctx.out.warn(f"{found.message}; what works everywhere: {heredoc.WHAT_WORKS}")


def builder(engine: str, env: Mapping[str, str]) -> Builder:
    if engine == "podman":
        out = proc.ask(["podman", "version", "--format", "{{.Client.Version}}"], env)
        info = proc.ask(["podman", "info", "--format", "{{.Host.BuildahVersion}}"], env)
        version, buildah = (said.stdout.strip() if said.ok else "" for said in (out, info))
        return Builder("podman", version, buildah=buildah)
    out = proc.ask(["docker", "version", "--format", "{{json .}}"], env)
    client, podman = _docker_versions(out.stdout)
    if probe.unreachable(out):
        return Builder("docker", client)  # no daemon: the build itself says so, with its hint
    if podman:
        return Builder("docker", client, podman_server=podman)
    if env.get("DOCKER_BUILDKIT", "").strip() == "0":
        return Builder("docker", client, buildkit=False, buildkit_why="DOCKER_BUILDKIT=0")
    if not proc.ask(["docker", "buildx", "version"], env).ok:
        why = "no buildx plugin: `docker build` falls back to the legacy builder"
        return Builder("docker", client, buildkit=False, buildkit_why=why)
    return Builder("docker", client)


def _docker_versions(text: str) -> tuple[str, str]:
    """(the docker client's version, podman's version when podman serves the socket)."""
    import json

    try:
        data = json.loads(text.strip().splitlines()[0]) if text.strip() else {}
    except ValueError:
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    client = str((data.get("Client") or {}).get("Version", ""))
    components = (data.get("Server") or {}).get("Components") or []
    podman = [c for c in components if "podman" in str(c.get("Name", "")).lower()]
    return client, str(podman[0].get("Version", "")) if podman else ""


def stream(ctx: Context, argv: Sequence[str], *, hint: str | None = None) -> None:
    """Run `argv` in the repository: a non-zero exit is CommandFailed naming the step, or
    exit 3 when the engine's daemon does not answer at all."""
    ctx.out.detail("+ " + " ".join(argv))
    code = proc.run_foreground(argv, cwd=ctx.repo, env=ctx.env)
    if code == 0:
        return
    step = " ".join(argv[:2])  # "docker build", "podman pull", "enroot import"
    if argv[0] in ("docker", "podman"):
        # Why the engine cannot reach its daemon, asked only after a failure, so a working
        # build or pull pays nothing for it.
        version = [argv[0], "version", "--format", "{{.Server.Version}}"]
        answer = proc.ask(version, ctx.env)  # a timeout (exit -1) is no answer either
        if answer.returncode == -1 or probe.unreachable(answer):  # else the step's failure stands
            raise EnvironmentUnusable(
                f"{step} failed: the {argv[0]} daemon is not reachable ({answer.said})",
                hint="start it, or point DOCKER_HOST at a running one; `uvdock doctor` checks",
            )
    raise CommandFailed(argv, code, message=f"{step} exited with status {code}", hint=hint)
