"""The setup checks of `uvdock doctor`: each returns pass / fail / warn with its fix.

A check whose prerequisite failed is skipped rather than failing for the same reason twice.
Nothing is changed. Every fix can be run as printed: an image is offered to build only where
this engine can build the Dockerfile, to pull only with the remote the pull needs.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.doctor.logscan import diagnose
from uvdock.errors import UvdockError
from uvdock.files import textlines
from uvdock.project.pyproject import required_uv_version, requires_python
from uvdock.run import git, proc, slurm, slurm_containers, slurm_steps

if TYPE_CHECKING:
    from uvdock.context import Context
    from uvdock.run.ci_container import CIContainer

FORK_DOC = "docs/contributing-from-a-fork.md"
LOW_DISK_BYTES = 5 * 10**9  # warn under 5 GB where the uv cache lives
_PYTHON_VERSION = "import platform; print(platform.python_version())"
# doctor/signatures.py rows that mean the network, not the project.
_NETWORK_SIGNATURES = frozenset({"network-name-resolution", "network-connect"})


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str  # pass, fail, warn, skip
    detail: str
    fix: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        ok = None if self.status == "skip" else self.status != "fail"
        return {"name": self.name, "ok": ok, **asdict(self), "seconds": round(self.seconds, 1)}


Outcome = tuple[str, str, str]  # status, detail, fix


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[-1].strip()


class _Checks:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.python = ""  # the venv's Python version, once the venv check read it

    @cached_property
    def shim(self) -> CIContainer:
        from uvdock.run.ci_container import CIContainer

        return CIContainer.of(self.ctx)  # the project `uvdock lock` from here acts on

    def engine(self) -> Outcome:
        placement = self.shim.placement
        if placement.mode == "local":
            if placement.by_hand:
                return "pass", f"none: uv runs on this machine ({placement.said})", ""
            return "pass", "already inside the CI container (local)", ""
        if placement.mode == "srun":
            if proc.which("srun", self.ctx.env) is None:
                fix = "run on a Slurm login node, or choose --engine docker|podman"
                return "fail", "srun is not on PATH", fix
            slurm.preflight(self.ctx.env, placement.extra_args)  # exit-3 errors: fail + fix
            return "pass", "srun with pyxis; slurmctld answers", ""
        engine = placement.engine
        probe = proc.run([engine, "info"], env=self.ctx.env, check=False, timeout=60)
        if probe.ok:
            return "pass", f"{engine} reachable", ""
        other = "podman" if engine == "docker" else "docker"
        fix = "start the engine's daemon/socket (or set DOCKER_HOST)"
        if proc.which(other, self.ctx.env) is not None:
            fix += f", or choose --engine {other}"
        return "fail", f"{engine} is installed but not reachable: {_last_line(probe.stderr)}", fix

    def image(self) -> Outcome:
        placement = self.shim.placement
        if placement.mode == "srun":
            image = slurm.configured_image(self.ctx.config, self.ctx.repo)
            return "pass", image + (" (squashfs)" if image.startswith("/") else ""), ""
        if placement.mode == "local":
            return "pass", placement.describe(), ""
        from uvdock.run import probe

        engine, container = placement.engine, placement.container
        if placement.mode == "exec":
            info = probe.container(engine, container, self.ctx.env, timeout=60)
            if info is None:
                fix = "start it, or drop --container to use an image"
                return "fail", f"no container named {container}", fix
            if not info.running:
                why = f"container {container} is not running"
                return "fail", why, f"{engine} start {container}"
            return "pass", f"container {container} is running", ""
        # Why this image: derived from the repository, uvdock's default, or who set it.
        origin = self.ctx.layers.origins.get("image")
        if origin is None:
            why = " (uvdock's default, Megatron-LM's; set `image` in [tool.uvdock])"
        elif origin == "--image":
            why = ""  # named on this command line
        else:
            why = f" ({origin})" if origin.startswith("derived") else f" (set in {origin})"
        if not probe.image(engine, placement.image, self.ctx.env, timeout=60).ok:
            missing = f"image {placement.image} is not present in {engine}{why}"
            return "fail", missing, self._image_fix()
        return "pass", f"image {placement.image} present{why}", ""

    def _image_fix(self) -> str:
        from uvdock.run.build_check import build_refusal

        ctx, config, engine = self.ctx, self.ctx.config, self.shim.placement.engine
        cannot_build = ""
        if not textlines.regular_file(ctx.repo / config.dockerfile):  # nothing to build from
            cannot_build = f"no {config.dockerfile} in this repository"
        elif engine in ("docker", "podman"):
            found = build_refusal(ctx, engine, config.dockerfile)
            cannot_build = found.message if found is not None and found.refuse else ""
        can_pull = bool(config.registry_image) and (
            git.remote_url(ctx.repo, config.gitlab_remote) is not None
        )
        ways = ["uvdock image build"] * (not cannot_build) + ["uvdock image pull"] * can_pull
        why = f" (no build here: {cannot_build})" if cannot_build else ""
        if ways:
            return " or ".join(ways) + f", or name one with --image ({FORK_DOC}){why}"
        return (
            f"an image of your own that holds uv, the venv ({config.venv}) and a Python "
            f"satisfying requires-python, named with --image ({FORK_DOC}){why}"
        )

    def mounts(self) -> Outcome:
        where = self.ctx.config.workdir
        try:
            self.shim.check_usable()
        except UvdockError as exc:
            return "fail", exc.message, exc.hint or f"mount {self.ctx.repo} at {where}"
        mounted = {
            "exec": f"container mounts this repository at {where}",
            "local": "runs here (no mount needed)",
        }.get(self.shim.placement.mode, f"fresh containers mount {self.ctx.repo} at {where}")
        return "pass", mounted, ""

    def uv(self) -> Outcome:
        from uvdock.project.uvversion import parse, satisfies

        found = self.shim.capture(["uv", "--version"])
        version = parse(found.stdout) if found.ok else None
        if version is None:
            why = _last_line(found.stderr) or f"exit {found.returncode}"
            fix = f"wrong image: {self._image_fix()}"
            return "fail", f"uv not found in the container ({why})", fix
        required = required_uv_version(self.ctx.project)
        if required is None:
            return "pass", f"uv {version} (no [tool.uv] required-version)", ""
        if not satisfies(version, required):
            why = f"uv {version} does not satisfy required-version {required}"
            return "fail", why, f"a newer CI image: {self._image_fix()}"
        return "pass", f"uv {version} satisfies required-version {required}", ""

    def venv(self) -> Outcome:
        venv = self.ctx.config.venv
        # One container answers both: the venv's Python is there, and which it is.
        found = self.shim.capture([f"{venv}/bin/python", "-c", _PYTHON_VERSION])
        self.python = found.stdout.strip()
        if not found.ok or not self.python:
            fix = f"set venv in your user config, or use the CI image: {self._image_fix()}"
            return "fail", f"{venv}/bin/python is missing in the container", fix
        return "pass", f"{venv}/bin/python present", ""

    def python_version(self) -> Outcome:
        from uvdock.project.uvversion import satisfies  # a version against a specifier set

        required = requires_python(self.ctx.project)
        if required is None:
            return "pass", f"Python {self.python} (no requires-python)", ""
        if satisfies(self.python, required):
            return "pass", f"Python {self.python} satisfies requires-python {required}", ""
        why = f"Python {self.python} in {self.ctx.config.venv} does not satisfy requires-python "
        why += f"{required}: every uv command downloads another CPython instead"
        return "fail", why, f"an image whose venv Python satisfies {required}: {self._image_fix()}"

    def base_ref(self) -> Outcome:
        ref, said = self.ctx.base_ref, self.ctx.base_ref_said()
        if git.verify_commit(self.ctx.repo, ref) is not None:
            return "pass", said, ""
        if (remote := git.remote_of(ref, self.ctx.repo)) is not None:
            return "warn", f"{ref} does not exist here ({said})", f"git fetch {remote}"
        fix = 'name one that exists: base-ref = "REF" in uvdock.toml or the user config'
        return "warn", f"{ref} does not exist here ({said}): `lock diff` needs BASE named", fix

    def pins(self) -> Outcome:
        from uvdock.image import pins
        from uvdock.image.scan import scan_managed

        findings = pins.check(scan_managed(self.ctx.repo, self.ctx.config))
        if not findings:
            return "pass", "the managed base-image pins agree", ""
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        fix = "see uvdock image check; uvdock image bump TAG moves every dev pin"
        return "fail", f"{findings[0].location}: {findings[0].message}{more}", fix

    def lock(self) -> Outcome:
        found = self.shim.capture(self.shim.uv_argv(["lock", "--check"]))
        if found.ok:
            lock, pyproject = (self.ctx.project_file(n) for n in ("uv.lock", "pyproject.toml"))
            return "pass", f"{lock} matches {pyproject}", ""
        findings = diagnose(found.stderr + "\n" + found.stdout).findings
        fix = findings[0].command if findings else "uvdock lock"
        if findings and findings[0].signature in _NETWORK_SIGNATURES:
            # Not the signature's offline sync: it cannot check a lock, and fails on an empty cache.
            from uvdock.config.settings import user_config_file

            fix = "give the container a network that reaches the package index"
            if self.shim.placement.engine == "podman":
                where = user_config_file(self.ctx.env)
                fix += f' (rootless podman: engine-args = ["--network=host"] in {where})'
            fix += ', or a proxy (engine-args = ["--env", "HTTPS_PROXY"])'
        why = _last_line(found.stderr) or f"exit {found.returncode}"
        return "fail", f"uv lock --check failed: {why}", fix

    def disk(self) -> Outcome:
        cache = Path(self.ctx.config.uv_cache).expanduser()
        probe = next((p for p in (cache, *cache.parents) if p.exists()), Path(cache.anchor))
        free = shutil.disk_usage(probe).free
        detail = f"{free / 10**9:.1f} GB free at {cache}"
        if free < LOW_DISK_BYTES:
            fix = "free space there (uv cache prune), or point uv-cache at a bigger disk"
            return "warn", detail + " (under 5 GB)", fix
        return "pass", detail, ""

    def reusable(self) -> Outcome:
        """The unpacked containers the srun engine keeps (pyxis --container-name)."""
        placement, env = self.shim.placement, self.ctx.env
        nodes = slurm_steps.doctor_nodes(env, placement.extra_args)
        listed = slurm_containers.list_containers(env, placement.extra_args, nodes)
        current = slurm.PYXIS_PREFIX + placement.container
        stale = sum(n != current for names in listed.values() for n in names)
        shown = "; ".join(
            f"{node}: "
            + (", ".join(f"{n} (current)" if n == current else n for n in names) or "none")
            for node, names in listed.items()
        )
        if stale:
            why = f"{shown}; {stale} not of the current image and checkout"
            return "warn", why, "uvdock doctor --prune"
        return "pass", shown or "none", ""

    def lts(self) -> Outcome:
        from uvdock.lts import requirements as lts

        configured = self.ctx.config.lts_requirements
        if not textlines.regular_file(path := self.ctx.repo / configured):
            return "skip", f"no {configured} here", ""
        problems = lts.parse(textlines.read_text(path, errors="replace")).problems
        if problems:
            where = f"{configured}:{problems[0].line}: {problems[0].message}"
            return "fail", where, "fix the line (uvdock lts check lists every problem)"
        return "pass", f"{configured} parses", ""


# (name, method, prerequisites): a check runs only when every prerequisite passed.
_PLAN: tuple[tuple[str, Callable[[_Checks], Outcome], tuple[str, ...]], ...] = (
    ("git repository", lambda checks: ("pass", str(checks.ctx.repo), ""), ()),
    ("engine", _Checks.engine, ("git repository",)),
    ("image or container", _Checks.image, ("engine",)),
    ("repository mount", _Checks.mounts, ("image or container",)),
    ("uv in the container", _Checks.uv, ("repository mount",)),
    ("venv", _Checks.venv, ("repository mount",)),
    ("Python", _Checks.python_version, ("venv",)),
    ("base ref", _Checks.base_ref, ("git repository",)),
    ("base-image pins", _Checks.pins, ("git repository",)),
    ("uv.lock current", _Checks.lock, ("uv in the container",)),
    ("uv cache disk space", _Checks.disk, ("git repository",)),
    ("srun unpacked containers", _Checks.reusable, ("uv in the container",)),
    ("LTS requirements", _Checks.lts, ("git repository",)),
)


def _on_srun(ctx: Context) -> bool:
    try:
        return ctx.config.engine == "srun"
    except UvdockError:  # no repository, a bad config: the first checks say so
        return False


def run_checks(
    ctx: Context, on_result: Callable[[CheckResult], None] | None = None
) -> list[CheckResult]:
    """Every check in order, each handed to `on_result` as it finishes (doctor talks while
    it works); doctor only reads, so --dry-run does not stop the probes."""
    ctx = ctx.with_options(dry_run=False) if ctx.dry_run else ctx
    checks = _Checks(ctx)
    results: dict[str, CheckResult] = {}
    for name, method, needs in _PLAN:
        if method is _Checks.reusable and not _on_srun(ctx):
            continue  # not a question elsewhere: no line for it
        if blocked := [n for n in needs if results[n].status not in ("pass", "warn")]:
            # Name the check that failed, not the one skipped because of it.
            cause = results[blocked[0]]
            detail = cause.detail if cause.status == "skip" else f"skipped: {cause.name} failed"
            results[name] = CheckResult(name, "skip", detail)
        else:
            started = time.monotonic()
            try:
                status, detail, fix = method(checks)
            except UvdockError as exc:
                status, detail, fix = "fail", exc.message, exc.hint or ""
            results[name] = CheckResult(name, status, detail, fix, time.monotonic() - started)
        if on_result is not None:
            on_result(results[name])
    return list(results.values())
