"""The CI container a repository's commands run in: where it is (docker, podman, srun, or
this machine), whether it can run them, running them there, stopping them on Ctrl-C, and
giving the files they wrote back to the invoking user. The argv shapes are engines.py's."""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.run import engines, git, ownership, probe, proc, signals, slurm, slurm_steps, stop

if TYPE_CHECKING:
    from uvdock.config.settings import Config
    from uvdock.context import Context
    from uvdock.ui.output import Output


class CIContainer:
    """Runs commands where the configuration says uv belongs, for one repository."""

    def __init__(
        self,
        config: Config,
        *,
        repo: Path,
        env: Mapping[str, str],
        out: Output,
        dry_run: bool = False,
        said: Mapping[str, str] | None = None,
        project: str = "",
    ) -> None:
        self.config, self.repo, self.env, self.out, self.dry_run = config, repo, env, out, dry_run
        # A uv project nested in the repository (its path from the root, "" for the root):
        # uv runs there (`uv --directory`), so it finds that project's pyproject and lock.
        self.project = project
        # Settings as the user should read them, naming who chose them (Context.said):
        # "engine = 'local' (from uvdock.toml)" is never reported as "--engine local".
        self.said = dict(said or {})
        self.run_id, self._usable = os.urandom(6).hex(), False
        self._stop_problems: list[str] = []
        # Local placement: gets the pid of the child, which then leads its own process group
        self.on_local_start: Callable[[int], None] | None = None
        # Hears `uv --version` from the next uv run (a run container's: report_uv)
        self.on_uv_version: Callable[[str], None] | None = None

    @classmethod
    def of(cls, ctx: Context, config: Config | None = None, **said: str) -> CIContainer:
        """The CI container of this invocation, for its uv project. A command whose own flag
        chose a setting passes the changed `config` and names the flag (`engine="--slurm"`),
        so messages say who chose it."""
        named = {name: ctx.said(name) for name in ("engine", "uv_cache", "engine_args")}
        return cls(
            config or ctx.config,
            repo=ctx.repo,
            env=ctx.env,
            out=ctx.out,
            dry_run=ctx.dry_run,
            said={**named, **said},
            project=ctx.project_path,
        )

    @property
    def container_name(self) -> str:
        """A run or srun container's name, so an interrupt (or `lock resolve --abort` after
        a kill) can stop it."""
        return f"uvdock-{self.run_id}"

    @cached_property
    def placement(self) -> engines.Placement:
        cfg = self.config
        if cfg.engine == "local":
            return engines.Placement("local", by_hand=True, said=self._said("engine"))
        if cfg.engine == "auto" and engines.inside_ci_container(self.env, cfg.venv):
            return engines.Placement("local")
        if cfg.engine == "srun":
            image = slurm.configured_image(cfg, self.repo, check=False)
            # engine-args' own pyxis container name replaces uvdock's, never both
            own = slurm.option_value(cfg.engine_args, "--container-name", "--container-name")
            container = "" if own else slurm.container_name(image, self.repo, os.getuid())
            return engines.Placement("srun", "srun", container, image, cfg.engine_args)
        said = self._said("engine")
        engine = probe.pick_engine(cfg.engine, self.env, dry_run=self.dry_run, said=said)
        marker = ((stop.RUN_MARKER, self.run_id),)  # what stop.stop_tagged finds the command by
        if cfg.container:
            return engines.Placement("exec", engine, cfg.container, env=marker)
        if not cfg.image:
            raise EnvironmentUnusable(
                "no image or container configured",
                hint="get one with `uvdock image build` or `uvdock image pull`, or name one with --image / --container",
            )
        init = probe.engine_init(engine, self.env)
        return engines.Placement("run", engine, "", cfg.image, cfg.engine_args, init=init)

    def _said(self, name: str) -> str:
        return self.said.get(name) or f"{name.replace('_', '-')} = {getattr(self.config, name)!r}"

    @cached_property
    def mounts(self) -> engines.Mounts:
        """The read-write mounts: this repository and the uv cache, each the user's own."""
        cfg = self.config
        cache: str | None = cfg.uv_cache
        mounting = self.placement.mode in ("run", "srun")  # exec and local mount nothing
        if mounting:
            ownership.require_own_mounts(cache, cfg.engine_args, self._said, self.env)
        try:
            if cache and not self.dry_run:
                Path(cache).mkdir(parents=True, exist_ok=True)
        except OSError:
            self.out.warn(f"uv cache {cache} cannot be created; running without a cache mount")
            cache = None
        if mounting and not self.dry_run:  # git's safe.directory rule, for the repo mount
            ownership.require_safe_directory(self.repo, self.env)
        return engines.Mounts(self.repo, cfg.workdir, cache, cfg.container_uv_cache)

    @cached_property
    def target(self) -> engines.Placement:
        """The placement to use now: an exec target by its verified id, so a container
        recreated under the same name is checked like a new one."""
        at = self.placement
        if at.mode != "exec" or self.dry_run:
            return at
        found = probe.verified(at, self.config.workdir, self.repo, self.env, cached=True)
        return at._replace(container=found)

    def argv(
        self,
        command: Sequence[str],
        *,
        tty: bool = False,
        version: bool = False,
        shape: Sequence[str] | None = None,
    ) -> list[str]:
        """The argv for `command` here; `shape`: srun's nodes and tasks, else the steps'."""
        at, mounts = self.target, self.mounts
        name = self.container_name if at.mode in ("run", "srun") else None
        if at.mode == "srun" and shape is None:
            shape = slurm_steps.shape_args(self.srun.tasks, self.srun.nodes())
        return engines.command_argv(
            at, command, mounts=mounts, tty=tty, name=name, version_first=version, shape=shape or ()
        )

    @cached_property
    def srun(self) -> Spread:
        return Spread(self)

    def _version_line(self, command: Sequence[str]) -> Callable[[bytes], bytes] | None:
        """For the first uv run after report_uv: takes the version line off its stderr."""
        hear, self.on_uv_version = self.on_uv_version, None
        if hear is None or command[:1] != ["uv"]:
            return None

        def said(line: bytes) -> bytes:  # the version goes to `hear`; anything else is shown
            text = line.decode(errors="replace")
            if not text.startswith(engines.VERSION_LINE):
                return line
            hear(text.removeprefix(engines.VERSION_LINE).strip())
            return b""

        return said

    @cached_property
    def step_env(self) -> Mapping[str, str]:
        """srun's environment carries the step's variables; engine CLIs get the caller's."""
        if self.placement.mode != "srun":
            return self.env
        return engines.srun_env(self.env, self.placement, self.mounts, venv=self.config.venv)

    def check_usable(self) -> None:
        """Exit 3 unless the command could run: engine, image or container, mounts. Probed
        once: `add` asks through `capture` and again through `run`."""
        at = self.placement
        if self._usable or self.dry_run:
            pass
        elif at.mode == "local":
            if proc.which("uv", self.env) is None:
                mine = f"on this machine ({at.said or '--engine local'})"
                where = mine if at.by_hand else "in this container"
                raise EnvironmentUnusable(f"uv is not on PATH {where}")
        elif at.mode == "srun":
            if proc.which("srun", self.env) is None:
                raise EnvironmentUnusable(
                    f"{self._said('engine')}: `srun` is not on PATH (not on a Slurm login node?)"
                )
            slurm.configured_image(self.config, self.repo)
            slurm.preflight(self.env, at.extra_args)
        elif at.mode == "exec":
            probe.verified(at, self.config.workdir, self.repo, self.env, cached=False)
        elif probe.unreachable(found := probe.image(at.engine, at.image, self.env)):
            raise EnvironmentUnusable(
                f"{at.engine} is installed but its daemon is not reachable: {found.said}"
            )
        elif not found.ok:
            raise EnvironmentUnusable(
                f"image {at.image} is not present in {at.engine}",
                hint="build it with `uvdock image build`, pull it with `uvdock image pull`, or name another with --image",
            )
        self._usable = True

    def _ready(self) -> None:
        """Before a run or srun container starts: it can, and srun's image is unpacked."""
        if self.placement.mode in ("run", "srun"):
            self.check_usable()
        if self.placement.mode == "srun":
            self.srun.unpack()

    def run(
        self, command: Sequence[str], *, tty: bool | None = None, writes: Sequence[str] = ()
    ) -> int:
        """Run in the container with the terminal attached; return the command's exit code."""
        if not command:
            raise InputRefused("no command given")
        if tty is None:
            tty = sys.stdin.isatty() and sys.stdout.isatty()
        if self.dry_run:
            self.out.command(self.argv(command, tty=tty), placement=self.target)
            return 0
        self._ready()
        mode = self.placement.mode
        if mode == "srun" and self.srun.tasks == "every node":
            code = self.srun.on_every_node(command)
        else:
            version = self._version_line(command)
            argv = self.argv(command, tty=tty, version=version is not None)
            code = self.foreground(argv, interactive=tty, first_line=version)
        at, workdir = self.placement, self.config.workdir
        if code != 0 and mode == "exec" and probe.verified_gone(at, workdir, self.repo, self.env):
            # The id we exec'd is gone, so nothing ran. A container recreated under the same
            # name is checked like a new one, then the command runs once.
            del self.__dict__["target"]
            code = self.foreground(self.argv(command, tty=tty), interactive=tty)
        if code == 125 and mode == "run":  # the engine's, unless it starts now
            again = proc.run(self.argv(["true"]), env=self.env, check=False)
            if not again.ok:  # its words went to the terminal: these are the same
                raise self.engine_failed(again.stderr)
        if writes:
            self._give_back(writes)
        return code

    def uv_argv(self, args: Sequence[str]) -> list[str]:
        """`uv ARGS` for the project: `uv --directory infra/tool ARGS` in a nested one."""
        return ["uv", "--directory", self.project, *args] if self.project else ["uv", *args]

    def run_uv(self, args: Sequence[str], *, writes: Sequence[str] = ()) -> int:
        """uv, without a terminal (`-t`): the user's Ctrl-C reaches uvdock, which stops it."""
        writes = [f"{self.project}/{w}" for w in writes] if self.project else writes
        if self.out.quiet or self.out.verbose:
            args = ["-q" if self.out.quiet else "-v", *args]
        code = self.run(self.uv_argv(args), tty=False, writes=writes)
        if code in (126, 127):
            raise self.uv_missing()
        if code != 0 and self._stopped_from_outside(code):
            raise EnvironmentUnusable(
                f"container stopped while uv ran (exit {code}); nothing is wrong with the project",
                hint="start the container again (or drop --container to use a fresh one) and rerun",
            )
        return code

    def _stopped_from_outside(self, code: int) -> bool:
        """`podman stop`/`kill` from elsewhere: exec's target is no longer running, or a run
        container's command died by SIGTERM/SIGKILL that uvdock did not send."""
        at = self.target
        if at.mode != "exec":
            return at.mode == "run" and code in (137, 143)
        info = probe.container(at.engine, at.container, self.env)
        return info is None or not info.running

    def uv_missing(self) -> EnvironmentUnusable:
        if self.placement.mode == "local":
            where = "on PATH" if self.placement.by_hand else "in this container"
            return EnvironmentUnusable(
                f"the local uv ({where}) failed to start (exit 126/127)",
                hint="check `uv --version` here, or drop --engine local to run uv in the CI container",
            )
        return EnvironmentUnusable(
            "uv was not found in the container: is this the CI image?",
            hint="use the image built from docker/Dockerfile.ci.dev (`uvdock image build`)",
        )

    def capture(self, command: Sequence[str]) -> proc.Completed:
        """Run captured; a run container that could not start is the engine's failure."""
        self._ready()
        version = self._version_line(command)
        argv = self.argv(command, tty=False, version=version is not None)
        with signals.interruptible():
            try:
                done = proc.run(argv, cwd=self.repo, env=self.step_env, check=False)
            except KeyboardInterrupt:
                self._stop(grace=0)  # killing the engine client leaves its container
                raise
        if done.returncode == 125 and self.placement.mode == "run":
            raise self.engine_failed(done.stderr)
        if version is not None:
            first, _, rest = done.stderr.partition("\n")
            if not version((first + "\n").encode()):
                done = done._replace(stderr=rest)
        return done

    def engine_failed(self, message: str) -> EnvironmentUnusable:
        from uvdock.config.settings import user_config_file

        config = user_config_file(self.env)
        return engines.start_failure(self.placement, message, config, self._said("engine_args"))

    def foreground(
        self,
        argv: list[str],
        *,
        interactive: bool = False,
        first_line: Callable[[bytes], bytes] | None = None,
    ) -> int:
        """Run an argv built for this placement; an interrupt stops what it started.
        `interactive`: it has a terminal (`-t`, `--pty`) and gets the user's keys."""
        self.out.detail("+ " + shlex.join(argv))
        mode, engine = self.placement.mode, self.placement.engine
        # Should uvdock die while a shell runs in a run container, the shell is hung up
        # through the engine, as a closed terminal would: nothing else would ever end it.
        hang_up = [engine, "kill", "--signal", "HUP", "--", self.container_name]
        return proc.run_foreground(
            argv,
            cwd=self.repo,
            env=self.step_env,
            on_interrupt=self._stop,
            forward=proc.FORWARDED.get(mode, signal.SIGINT),
            interactive=interactive,
            first_line=first_line,
            record_group=self.on_local_start if mode == "local" else None,
            on_death=hang_up if interactive and mode == "run" else (),
        )

    def _stop(self, grace: float = 10.0) -> None:
        """Ctrl-C or SIGTERM: stop what the command started in the container, and wait."""
        at, problem = self.target, None
        if at.mode == "exec":
            problem = stop.stop_tagged(at.engine, at.container, self.run_id, self.env)
        elif at.mode == "run":
            problem = stop.stop_container(
                at.engine, self.container_name, self.env, grace=grace, log=self.out.detail
            )
        elif at.mode == "srun":  # should srun have died before it ended its job
            from uvdock.run.slurm_containers import cancel_job

            cancel_job(self.env, self.container_name)
        if problem and problem not in self._stop_problems:
            self._stop_problems.append(problem)
            self.out.error(problem)

    def _give_back(self, writes: Sequence[str]) -> None:
        """Files a root container wrote into the repo go back to the invoking user."""
        if self.placement.mode == "local" or (user := ownership.invoking_user(self.env)) is None:
            return
        uid, gid = user
        foreign = [w for w in writes if (p := self.repo / w).exists() and p.stat().st_uid != uid]
        targets = [f"{self.config.workdir}/{w}" for w in foreign]
        chown = self.argv(["chown", f"{uid}:{gid}", "--", *targets])
        if foreign and not proc.run(chown, env=self.env, check=False).ok:
            self.out.warn(
                f"could not give {', '.join(foreign)} back to uid {uid}; fix with sudo chown"
            )


class Spread:
    """How a CI container's srun steps spread over the nodes: `tasks` (ONCE unless the
    command says otherwise), the nodes chosen for them (asked of Slurm once), the unpack
    there first, and a step on every node with each node's outcome named."""

    def __init__(self, ci: CIContainer) -> None:
        self.ci, self.tasks = ci, slurm_steps.ONCE
        self._nodes: dict[str, list[str]] = {}

    def nodes(self) -> list[str]:
        ci, tasks = self.ci, self.tasks
        if tasks not in self._nodes and not ci.dry_run:  # a dry run asks Slurm nothing
            from uvdock.run.slurm_containers import ready_nodes

            at = ci.placement
            ready = ready_nodes(git.git_dir(ci.repo), at.container)
            self._nodes[tasks] = slurm_steps.step_nodes(ci.env, at.extra_args, tasks, ready)
        return self._nodes.get(tasks, [])

    def unpack(self) -> None:
        """The image's container on each of the nodes that lacks it (not in a dry run)."""
        ci, shape = self.ci, slurm_steps.shape_args
        if not ci.dry_run:
            from uvdock.run.slurm_containers import unpack_once

            unpack_once(
                ci.placement,
                self.nodes(),
                lambda nodes: ci.argv(["true"], shape=shape(slurm_steps.EVERY_NODE, nodes)),
                git.git_dir(ci.repo),
                ci.foreground,
                ci.out,
                ci.env,
            )

    def on_every_node(self, command: Sequence[str]) -> int:
        ci = self.ci
        report = slurm_steps.NodeReport(ci.repo, ci.config.workdir, ci.run_id, self.nodes())
        try:
            code = ci.foreground(ci.argv(report.command(command)))
        except BaseException:
            report.discard()  # interrupted: the nodes' codes say nothing new
            raise
        return report.outcome(code, ci.out)
