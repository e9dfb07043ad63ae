"""The srun engine's unpacked containers, per node: the record of the finished unpacks,
the unpack in a step of its own, the removal of one cut short (on its node alone), and
enroot's list and remove on each node (for `doctor`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import EnvironmentUnusable
from uvdock.run import git, proc, signals
from uvdock.run.slurm import NAME_PREFIX, PYXIS_PREFIX
from uvdock.run.slurm_steps import EVERY_NODE, shape_args, without_pyxis

if TYPE_CHECKING:
    from uvdock.run.engines import Placement
    from uvdock.ui.output import Output

_READY_FILE = "srun-containers"  # in .git/uvdock: NODE NAME of each finished unpack

ANY_NODE = "*"  # the record's node when Slurm could not say which (engine-args pin their own)


def ready_nodes(git_dir: Path, name: str) -> list[str]:
    return [node for node, n in git.read_record(git_dir, _READY_FILE, " ") if n == name]


def mark_ready(git_dir: Path, name: str, nodes: Sequence[str]) -> None:
    entries = git.read_record(git_dir, _READY_FILE, " ")
    git.write_record(git_dir, _READY_FILE, " ", [*entries, *((node, name) for node in nodes)])


def forget(git_dir: Path, nodes: Sequence[str]) -> None:
    """Forget every container recorded on `nodes` (they were removed there), and those
    recorded on a node Slurm could not name (it may be one of them)."""
    entries = git.read_record(git_dir, _READY_FILE, " ")
    kept = [(node, n) for node, n in entries if node not in (*nodes, ANY_NODE)]
    git.write_record(git_dir, _READY_FILE, " ", kept)


def _enroot_step(extra_args: Sequence[str], nodes: Sequence[str], *command: str) -> list[str]:
    # Run where pyxis unpacks (on each node named, as this user): enroot's data path is there.
    return ["srun", "--quiet", *without_pyxis(extra_args), *shape_args(EVERY_NODE, nodes), *command]


_LIST = 'enroot list | while read -r n; do echo "$SLURMD_NODENAME $n"; done'


def list_containers(
    env: Mapping[str, str], extra_args: Sequence[str], nodes: Sequence[str]
) -> dict[str, list[str]]:
    """The reusable containers uvdock created (pyxis names) on each of `nodes`, at once."""
    found = proc.ask(_enroot_step(extra_args, nodes, "sh", "-c", _LIST), env, timeout=120)
    if not found.ok:
        raise EnvironmentUnusable(f"could not list enroot containers through srun: {found.said}")
    listed: dict[str, list[str]] = {node: [] for node in nodes}
    for node, _, name in (line.strip().partition(" ") for line in found.stdout.splitlines()):
        if name.startswith(PYXIS_PREFIX + NAME_PREFIX):
            listed.setdefault(node, []).append(name)
    return {node: sorted(names) for node, names in listed.items()}


def remove_containers(
    env: Mapping[str, str], extra_args: Sequence[str], node: str, pyxis_names: Sequence[str]
) -> str | None:
    """Remove unpacked containers on one node ("" or ANY_NODE: the one srun picks); None
    when done, else a sentence saying what is left."""
    if not pyxis_names:
        return None
    nodes = [node] if node and node != ANY_NODE else []
    argv = _enroot_step(extra_args, nodes, "enroot", "remove", "--force", *pyxis_names)
    done = proc.ask(argv, env, timeout=120)
    if done.ok:
        return None
    where, pin = (f" on {node}", f" -w {node}") if nodes else ("", "")
    return (
        f"could not remove {' '.join(pyxis_names)}{where} ({done.said}); remove with "
        f"`srun{pin} enroot remove --force NAME` or `uvdock doctor --prune`"
    )


def _listed(env: Mapping[str, str], job_name: str) -> list[str]:
    """The jobs named `job_name`, and inside an allocation its steps of that name (a step
    there is not a job of its own: scancel --name does not reach it)."""
    jobs = proc.ask(["squeue", "--noheader", f"--name={job_name}", "--format=%i"], env)
    found = jobs.stdout.split() if jobs.ok else []
    if allocation := env.get("SLURM_JOB_ID", ""):
        argv = ["squeue", "--noheader", "--steps", f"--jobs={allocation}", "--format=%i %j"]
        steps = (line.strip().partition(" ") for line in proc.ask(argv, env).stdout.splitlines())
        found += [step for step, _, name in steps if name == job_name]
    return found


def cancel_job(env: Mapping[str, str], job_name: str, *, wait: float = 15.0) -> None:
    """scancel the job (or, inside an allocation, the steps) srun started under `job_name`
    (its tasks and pyxis's clean-up end with it), and wait until squeue no longer lists
    it, so nothing of it is left when uvdock exits."""
    proc.ask(["scancel", "--quiet", f"--name={job_name}"], env)
    for step in (step for step in _listed(env, job_name) if "." in step):
        proc.ask(["scancel", "--quiet", step], env)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and _listed(env, job_name):
        time.sleep(0.2)


def unpack_once(
    placement: Placement,
    nodes: Sequence[str],
    argv_for: Callable[[list[str]], list[str]],
    git_dir: Path,
    foreground: Callable[[list[str]], int],
    out: Output,
    env: Mapping[str, str],
) -> None:
    """Unpack a .sqsh's reusable container on each node of `nodes` that does not hold it
    yet, in a step of its own (`argv_for(those nodes)` runs `true` there), saying where:
    an unpack cut short (Ctrl-C, scancel, a failure) is removed on those nodes alone,
    never reused half-written by the next step, and the others keep theirs."""
    name, ready = placement.container, ready_nodes(git_dir, placement.container)
    missing = [node for node in (nodes or [ANY_NODE]) if node not in ready]
    if not name or not missing:
        return
    where = ", ".join(missing) if nodes else "the node srun picks"
    out.info(f"unpacking {placement.image} on {where}, once, for reuse as {name}")
    argv = argv_for(list(nodes and missing))
    code, left = -1, []
    try:
        code = foreground(argv)
    finally:
        # A half-written container goes on the nodes of its step once that step has ended:
        # after an scancel, srun returns while the step's unsquashfs may still write for up
        # to KillWait, and a removal before that end leaves a partial tree the next step
        # would reuse. A second Ctrl-C must not cut the removal.
        if code != 0:
            with signals.held(reraise=False):
                job = next((a.split("=", 1)[1] for a in argv if a.startswith("--job-name=")), "")
                if job:
                    cancel_job(env, job, wait=30.0)
                extra, names = placement.extra_args, [PYXIS_PREFIX + name]
                left += [remove_containers(env, extra, node, names) for node in missing]
    if code != 0:
        raise EnvironmentUnusable(
            f"pyxis could not start {placement.image} on {where} (srun exit {code}; its "
            "messages are above)" + "".join(f"; {problem}" for problem in left if problem),
            hint="`uvdock doctor` checks the Slurm setup",
        )
    mark_ready(git_dir, name, missing)
