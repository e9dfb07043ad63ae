"""The setup checks of `uvdock doctor`: each returns pass / fail / warn with its fix.

A check whose prerequisite failed is reported as skipped rather than failing for the
same reason twice. Processes start only through proc and the shim; nothing is changed.
Every fix is one that can be run as printed here: an image is offered to build only where
this engine can build the Dockerfile, to pull only with the remote the pull needs.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import UvdockError
from uvdock.files import textlines
from uvdock.run import proc

if TYPE_CHECKING:
    from uvdock.context import Context
    from uvdock.run.ci_container import CIContainer

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
        return {
            "name": self.name,
            "ok": ok,
            "status": self.status,
            "detail": self.detail,
            "fix": self.fix,
            "seconds": round(self.seconds, 1),
        }


def _passed(detail: str) -> tuple[str, str, str]:
    return "pass", detail, ""


def _failed(detail: str, fix: str) -> tuple[str, str, str]:
    return "fail", detail, fix


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


class _Checks:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._shim: CIContainer | None = None
        self.python = ""  # the venv's Python version, once the venv check read it

    @property
    def shim(self) -> CIContainer:
        if self._shim is None:
            from uvdock.run.ci_container import CIContainer

            ctx = self.ctx
            said = {name: ctx.said(name) for name in ("engine", "uv_cache", "engine_args")}
            self._shim = CIContainer(
                ctx.config, repo=ctx.repo, env=ctx.env, out=ctx.out, dry_run=ctx.dry_run, said=said
            )
        return self._shim

    @property
    def mode(self) -> str:
        return self.shim.placement.mode

    def git_repository(self) -> tuple[str, str, str]:
        return _passed(str(self.ctx.repo))

    def engine(self) -> tuple[str, str, str]:
        placement = self.shim.placement
        if placement.mode == "local" and placement.by_hand:
            return _passed(f"none: uv runs on this machine ({placement.said})")
        if placement.mode == "local":
            return _passed("already inside the CI container (local)")
        if placement.mode == "srun":
            from uvdock.run import slurm

            if proc.which("srun", self.ctx.env) is None:
                return _failed(
                    "srun is not on PATH",
                    "run on a Slurm login node, or choose --engine docker|podman",
                )
            slurm.preflight(self.ctx.env, placement.extra_args)  # exit-3 errors: fail + fix
            return _passed("srun with pyxis; slurmctld answers")
        probe = proc.run([placement.engine, "info"], env=self.ctx.env, check=False, timeout=60)
        if not probe.ok:
            return _failed(
                f"{placement.engine} is installed but not reachable: {_last_line(probe.stderr)}",
                self._engine_fix(placement.engine),
            )
        return _passed(f"{placement.engine} reachable")

    def _engine_fix(self, engine: str) -> str:
        other = "podman" if engine == "docker" else "docker"
        fix = "start the engine's daemon/socket (or set DOCKER_HOST)"
        if proc.which(other, self.ctx.env) is not None:
            fix += f", or choose --engine {other}"
        return fix

    def image(self) -> tuple[str, str, str]:
        placement = self.shim.placement
        if placement.mode == "srun":
            from uvdock.run import slurm

            image = slurm.configured_image(self.ctx.config, self.ctx.repo)
            return _passed(f"{image}" + (" (squashfs)" if image.startswith("/") else ""))
        if placement.mode == "local":
            return _passed(placement.describe())
        from uvdock.run import probe

        if placement.mode == "exec":
            info = probe.container(placement.engine, placement.container, self.ctx.env, timeout=60)
            if info is None:
                return _failed(
                    f"no container named {placement.container}",
                    "start it, or drop --container to use an image",
                )
            if not info.running:
                return _failed(
                    f"container {placement.container} is not running",
                    f"{placement.engine} start {placement.container}",
                )
            return _passed(f"container {placement.container} is running")
        found = probe.image(placement.engine, placement.image, self.ctx.env, timeout=60)
        why = self._image_origin()
        if not found.present:
            return _failed(
                f"image {placement.image} is not present in {placement.engine}{why}",
                self._image_fix(placement.engine),
            )
        return _passed(f"image {placement.image} present{why}")

    def _image_origin(self) -> str:
        """Why this image: derived from the repository, uvdock's default, or who set it."""
        origin = self.ctx.layers.origins.get("image")
        if origin == "--image":
            return ""  # named on this command line
        if origin is None:
            return " (uvdock's default, Megatron-LM's; set `image` in [tool.uvdock])"
        return f" ({origin})" if origin.startswith("derived") else f" (set in {origin})"

    def _image_fix(self, engine: str) -> str:
        """How to get the CI image here (doctor.fixes), from what this machine can do."""
        from uvdock.doctor.fixes import image_ways
        from uvdock.image import heredoc
        from uvdock.run import git

        config = self.ctx.config
        try:
            text = textlines.read_text(
                self.ctx.repo / config.dockerfile, errors="replace", newlines=True
            )
        except OSError:  # nothing to build from
            text, cannot_build = "", f"no {config.dockerfile} in this repository"
        else:
            cannot_build = ""
        line = heredoc.first_heredoc(text)
        if line is not None and engine in ("docker", "podman"):
            from uvdock.run import builder_probe

            found = heredoc.verdict(
                builder_probe.builder(engine, self.ctx.env), config.dockerfile, line
            )
            cannot_build = found.message if found is not None and found.refuse else ""
        return image_ways(
            cannot_build=cannot_build,
            can_pull=bool(config.registry_image)
            and git.remote_url(self.ctx.repo, config.gitlab_remote) is not None,
            venv=config.venv,
        )

    def mounts(self) -> tuple[str, str, str]:
        try:
            self.shim.check_usable()
        except UvdockError as exc:
            return _failed(
                exc.message, exc.hint or f"mount {self.ctx.repo} at {self.ctx.config.workdir}"
            )
        where = self.ctx.config.workdir
        if self.mode == "exec":
            return _passed(f"container mounts this repository at {where}")
        if self.mode == "local":
            return _passed("runs here (no mount needed)")
        return _passed(f"fresh containers mount {self.ctx.repo} at {where}")

    def uv(self) -> tuple[str, str, str]:
        from uvdock.project.pyproject import required_uv_version
        from uvdock.project.uvversion import parse, satisfies

        found = self.shim.capture(["uv", "--version"])
        version = parse(found.stdout) if found.ok else None
        if version is None:
            why = _last_line(found.stderr) or f"exit {found.returncode}"
            return _failed(
                f"uv not found in the container ({why})",
                f"wrong image: {self._image_fix(self.shim.placement.engine)}",
            )
        required = required_uv_version(self.ctx.repo)
        if required is None:
            return _passed(f"uv {version} (no [tool.uv] required-version)")
        if not satisfies(version, required):
            return _failed(
                f"uv {version} does not satisfy required-version {required}",
                f"a newer CI image: {self._image_fix(self.shim.placement.engine)}",
            )
        return _passed(f"uv {version} satisfies required-version {required}")

    def venv(self) -> tuple[str, str, str]:
        venv = self.ctx.config.venv
        # One container answers both: the venv's Python is there, and which it is.
        found = self.shim.capture([f"{venv}/bin/python", "-c", _PYTHON_VERSION])
        version = found.stdout.strip()
        if not found.ok or not version:
            return _failed(
                f"{venv}/bin/python is missing in the container",
                "set venv in your user config, or use the CI image: "
                f"{self._image_fix(self.shim.placement.engine)}",
            )
        self.python = version
        return _passed(f"{venv}/bin/python present")

    def python_version(self) -> tuple[str, str, str]:
        from uvdock.project.pyproject import requires_python
        from uvdock.project.uvversion import satisfies  # a version against a specifier set

        required = requires_python(self.ctx.repo)
        if required is None:
            return _passed(f"Python {self.python} (no requires-python)")
        if satisfies(self.python, required):
            return _passed(f"Python {self.python} satisfies requires-python {required}")
        return _failed(
            f"Python {self.python} in {self.ctx.config.venv} does not satisfy requires-python "
            f"{required}: every uv command downloads another CPython instead",
            f"an image whose venv Python satisfies {required}: "
            f"{self._image_fix(self.shim.placement.engine)}",
        )

    def base_ref(self) -> tuple[str, str, str]:
        from uvdock.run import git

        ctx = self.ctx
        ref = ctx.base_ref
        said = ctx.base_ref_said()
        if git.verify_commit(ctx.repo, ref) is not None:
            return _passed(said)
        remote = git.remote_of(ref, ctx.repo)
        if remote is not None:
            return "warn", f"{ref} does not exist here ({said})", f"git fetch {remote}"
        return (
            "warn",
            f"{ref} does not exist here ({said}): `lock diff` needs BASE named",
            'name one that exists: base-ref = "REF" in uvdock.toml or the user config',
        )

    def pins(self) -> tuple[str, str, str]:
        from uvdock.image import pins
        from uvdock.image.scan import scan_managed

        findings = pins.check(scan_managed(self.ctx.repo, self.ctx.config))
        if findings:
            first = findings[0]
            more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
            return _failed(
                f"{first.location}: {first.message}{more}",
                "see uvdock image check; uvdock image bump TAG moves every dev pin",
            )
        return _passed("the managed base-image pins agree")

    def lock(self) -> tuple[str, str, str]:
        from uvdock.doctor.logscan import diagnose

        found = self.shim.capture(["uv", "lock", "--check"])
        if found.ok:
            return _passed("uv.lock matches pyproject.toml")
        findings = diagnose(found.stderr + "\n" + found.stdout).findings
        fix = findings[0].command if findings else "uvdock lock"
        if findings and findings[0].signature in _NETWORK_SIGNATURES:
            from uvdock.config.settings import user_config_file
            from uvdock.doctor.fixes import network_fix

            fix = network_fix(self.shim.placement.engine, str(user_config_file(self.ctx.env)))
        return _failed(
            f"uv lock --check failed: {_last_line(found.stderr) or f'exit {found.returncode}'}", fix
        )

    def disk(self) -> tuple[str, str, str]:
        cache = Path(self.ctx.config.uv_cache).expanduser()
        probe = cache
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        free = shutil.disk_usage(probe).free
        detail = f"{free / 10**9:.1f} GB free at {cache}"
        if free < LOW_DISK_BYTES:
            return (
                "warn",
                detail + " (under 5 GB)",
                "free space there (uv cache prune), or point uv-cache at a bigger disk",
            )
        return _passed(detail)

    def reusable(self) -> tuple[str, str, str]:
        """The unpacked containers the srun engine keeps (pyxis --container-name)."""
        from uvdock.run import slurm, slurm_containers, slurm_steps

        placement = self.shim.placement
        extra = placement.extra_args
        listed = slurm_containers.list_containers(
            self.ctx.env, extra, slurm_steps.doctor_nodes(self.ctx.env, extra)
        )
        current = slurm.PYXIS_PREFIX + placement.container
        stale = sum(n != current for names in listed.values() for n in names)
        shown = "; ".join(
            f"{node}: "
            + (", ".join(f"{n} (current)" if n == current else n for n in names) or "none")
            for node, names in listed.items()
        )
        if stale:
            return (
                "warn",
                f"{shown}; {stale} not of the current image and checkout",
                "uvdock doctor --prune",
            )
        return _passed(shown or "none")

    def lts(self) -> tuple[str, str, str]:
        from uvdock.lts import requirements as lts

        configured = self.ctx.config.lts_requirements
        path = self.ctx.repo / configured
        if not textlines.regular_file(path):
            return "skip", f"no {configured} here", ""
        problems = lts.parse(textlines.read_text(path, errors="replace")).problems
        if problems:
            first = problems[0]
            return _failed(
                f"{configured}:{first.line}: {first.message}",
                "fix the line (uvdock lts check lists every problem)",
            )
        return _passed(f"{configured} parses")


# (name, method, prerequisites): a check runs only when every prerequisite passed.
_PLAN: tuple[tuple[str, Callable[[_Checks], tuple[str, str, str]], tuple[str, ...]], ...] = (
    ("git repository", _Checks.git_repository, ()),
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

_SRUN_ONLY = ("srun unpacked containers",)


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
    if ctx.dry_run:
        ctx = ctx.with_options(dry_run=False)
    checks = _Checks(ctx)
    results: dict[str, CheckResult] = {}
    for name, method, needs in _PLAN:
        if name in _SRUN_ONLY and not _on_srun(ctx):
            continue  # not a question elsewhere: no line for it
        blocked = [n for n in needs if results[n].status not in ("pass", "warn")]
        if blocked:
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
            took = time.monotonic() - started
            results[name] = CheckResult(name, status, detail, fix, took)
        if on_result is not None:
            on_result(results[name])
    return list(results.values())
