"""Where a srun step runs: on how many nodes, which, as how many tasks. Writes run once,
`sync` once per node, `run` as srun itself would; each step is pinned to the nodes uvdock
chose, so the per-node record of unpacked containers (slurm_containers.py) is true."""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.files import textlines
from uvdock.run import proc
from uvdock.run.slurm import option_value, partition_of, sinfo_rows

if TYPE_CHECKING:
    from uvdock.ui.output import Output

ONCE = "once"  # a write (lock, add, remove, a relock): one task on one node
EVERY_NODE = "every node"  # sync: one task on every node of the allocation, in parallel
FOLLOW = "follow"  # run: the allocation's nodes, as srun would; engine-args pass through
# After the first task of a multi-node step of uvdock's own ends, the others get this long
# before srun ends them: a node that died is named within seconds, not when Slurm gives up.
STRAGGLER_SECONDS = 20
_USABLE = ("idle", "mix", "alloc", "comp")  # sinfo states, best first


def allocation_nodes(env: Mapping[str, str], nodelist: str | None = None) -> list[str]:
    """The nodes of `nodelist`, else of uvdock's allocation (salloc, sbatch), in Slurm's order."""
    if nodelist is None:
        nodelist = env.get("SLURM_JOB_NODELIST", "") if env.get("SLURM_JOB_ID") else ""
    found = proc.ask(["scontrol", "show", "hostnames", nodelist], env) if nodelist else None
    return found.stdout.split() if found and found.ok else []


def partition_nodes(env: Mapping[str, str], extra_args: Sequence[str]) -> list[str]:
    """The nodes of the partition a new job gets (engine-args' or the default one) that
    answer and take work, idle ones first."""
    rank: dict[str, int] = {}
    for _, row in sinfo_rows(env, partition_of(extra_args, env), "%N %t", "--Node", "--responding"):
        node, _, state = row.partition(" ")
        if (state := state.strip().rstrip("*~#!%$@^-")) in _USABLE:
            rank.setdefault(node, _USABLE.index(state))
    return sorted(rank, key=lambda node: rank[node])


def step_nodes(
    env: Mapping[str, str], extra_args: Sequence[str], tasks: str, ready_on: Sequence[str]
) -> list[str]:
    """The nodes a step runs on: the allocation's (a write: its first); outside one, as many
    of the partition's as engine-args ask (one by default), those already holding the
    unpacked container (`ready_on`) first. [] when engine-args pin nodes themselves or
    Slurm cannot say: the step is then not pinned."""
    if option_value(extra_args, "-w", "--nodelist") is not None:
        return []
    inside = allocation_nodes(env)
    pool = inside or sorted(partition_nodes(env, extra_args), key=lambda n: n not in ready_on)
    asked = re.match(r"\d+", option_value(extra_args, "-N", "--nodes") or "")
    count = 1 if tasks == ONCE else int(asked.group()) if asked else len(inside) or 1
    return pool[:count]


def shape_args(tasks: str, nodes: Sequence[str]) -> list[str]:
    """srun's options for a step of `tasks` on `nodes`; they come after engine-args, so a
    write stays one task whatever the allocation or engine-args say."""
    pin = [f"--nodelist={','.join(nodes)}"] if nodes else []
    if tasks == ONCE:
        return ["--nodes=1", "--ntasks=1", *pin]
    if tasks == EVERY_NODE:
        n = len(nodes) or 1
        shape = [f"--nodes={n}", f"--ntasks={n}", "--ntasks-per-node=1", *pin]
        return [*shape, f"--wait={STRAGGLER_SECONDS}"] if n > 1 else shape
    return pin


PYXIS_VALUED = ("image", "mounts", "workdir", "name", "save", "env")


def without_pyxis(extra_args: Sequence[str]) -> list[str]:
    """engine-args minus pyxis's options: an enroot step must not start in a container."""
    kept: list[str] = []
    args = iter(extra_args)
    for arg in args:
        if not arg.startswith(("--container", "--no-container")):
            kept.append(arg)
        elif "=" not in arg and arg.removeprefix("--container-") in PYXIS_VALUED:
            next(args, None)  # its value
    return kept


def doctor_nodes(env: Mapping[str, str], extra_args: Sequence[str]) -> list[str]:
    """Every node `doctor` looks at: the allocation's, else the partition's."""
    if named := option_value(extra_args, "-w", "--nodelist"):
        return allocation_nodes(env, named)
    return allocation_nodes(env) or partition_nodes(env, extra_args)


class NodeReport:
    """How a multi-node step of uvdock's own ended on each node. srun exits 0 when a node
    stops answering mid-step (it gives up on the node's tasks after --wait), so each task
    leaves its exit code in the repository's git folder, which every node sees at the
    workdir: a node that never finished is named, never taken for done. None of this when
    the git folder is not inside the checkout (a worktree's): srun's own code only."""

    def __init__(self, repo: Path, workdir: str, run_id: str, nodes: Sequence[str]) -> None:
        git_dir = repo / ".git"
        self.nodes = list(nodes)
        here = git_dir / "uvdock" / f"nodes-{run_id}"
        self.folder = here if git_dir.is_dir() and len(self.nodes) > 1 else None
        self.inside = f"{workdir.rstrip('/')}/.git/uvdock/{here.name}"

    def command(self, command: Sequence[str]) -> list[str]:
        if self.folder is None:
            return list(command)
        self.folder.mkdir(parents=True, exist_ok=True)
        mark = f'{shlex.quote(self.inside)}/"$SLURMD_NODENAME"'
        script = f'code=0; "$@" || code=$?; echo "$code" > {mark}; exit "$code"'
        return ["sh", "-c", script, "sh", *command]

    def discard(self) -> None:
        import shutil

        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def outcome(self, code: int, out: Output) -> int:
        """Name each node that failed or never finished; the exit code: the step's, or 1
        when srun said 0 although a node never finished."""
        if self.folder is None:
            return code
        said: dict[str, str] = {}
        for node in self.nodes:
            with contextlib.suppress(OSError):
                said[node] = textlines.read_text(self.folder / node, errors="replace").strip()
        self.discard()
        unfinished = [node for node in self.nodes if node not in said]
        for node in (n for n in said if said[n] != "0"):
            out.error(f"{node}: exit {said[node]}")
        for node in unfinished:
            out.error(
                f"{node}: did not finish (the node stopped answering, or its task was "
                f"killed); the other node(s) had ended {STRAGGLER_SECONDS} s before"
            )
        return 1 if code == 0 and unfinished else code


def allocation_argv(
    nodes: int, first: Sequence[str], extra_args: Sequence[str], gpus: int, job_name: str
) -> list[str]:
    """salloc of `nodes` nodes (the first of them `first`, where the step runs), for a
    command that then starts one step there: engine-args without pyxis's options."""
    argv = ["salloc", "--quiet", f"--nodes={nodes}", f"--job-name={job_name}"]
    argv += [f"--nodelist={node}" for node in first[:1]]
    argv += [f"--gpus-per-node={gpus}"] if gpus else []
    return [*argv, *without_pyxis(extra_args)]
