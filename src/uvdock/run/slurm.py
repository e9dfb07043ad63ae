"""Slurm + pyxis + enroot: which image a step gets, the unpacked container it reuses, the
checks that turn a bad setup into exit 3 before anything runs, and what an interrupted
step leaves to clean up.

pyxis reads an image as a squashfs file only when the value starts with '/' or '.';
anything else is a registry reference it imports itself, and a bare local tag
(`megatron-lm:local`) would be looked up on Docker Hub.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uvdock.errors import CommandFailed, EnvironmentUnusable
from uvdock.run import proc

if TYPE_CHECKING:
    from uvdock.config.settings import Config
    from uvdock.run.engines import Placement
    from uvdock.ui.output import Output

SQUASHFS_MAGIC = b"hsqs"
NAME_PREFIX = "uvdock-"  # pyxis names the enroot container pyxis_<name>
PYXIS_PREFIX = "pyxis_"
_READY_FILE = "srun-containers"  # in .git/uvdock: names whose unpack finished
_IMPORT_HINT = "write it with `uvdock image enroot`, or name a .sqsh with --image"


def is_path(image: str) -> bool:
    return image.startswith(("/", "./", "../", "~")) or image.endswith((".sqsh", ".squashfs"))


def is_local_tag(image: str) -> bool:
    """A tag only a local engine knows: no registry path (`megatron-lm:local`) or localhost/."""
    return ("/" not in image and "#" not in image) or image.startswith("localhost/")


def lts_output(enroot_output: str) -> str:
    """Where `image enroot --lts` writes the LTS image: enroot-output with `-lts` added."""
    path = Path(enroot_output)
    return str(path.with_name(f"{path.stem}-lts{path.suffix or '.sqsh'}"))


def step_image(
    image: str, *, repo: Path, enroot_output: str, lts_image: str = "", check: bool = True
) -> str:
    """What `--container-image` gets: an absolute .sqsh path, or a registry reference.

    A local tag means the local build, which reaches Slurm as the .sqsh that `uvdock image
    enroot` wrote (enroot-output; for `lts_image`, the LTS lane's, from `image enroot
    --lts`); without that file it is refused (exit 3).
    """
    if is_path(image):
        path = Path(image).expanduser().absolute()
    elif is_local_tag(image):
        lts = bool(lts_image) and image == lts_image
        output = lts_output(enroot_output) if lts else enroot_output
        path = (repo / output).absolute()
        command = "uvdock image enroot" + (" --lts" if lts else "")
        if check and not path.exists():
            raise EnvironmentUnusable(
                f"srun: {image} is a local image tag, which pyxis cannot read, and "
                f"{output} does not exist",
                hint=f"write it with `{command}`, or name a .sqsh with --image",
            )
        source = imported_from(path)
        if check and source and source != image:
            raise EnvironmentUnusable(
                f"srun: {output} holds {source}, not {image}",
                hint=f"import it with `uvdock --image {image} image enroot --output OTHER.sqsh`, "
                "then pass --image OTHER.sqsh",
            )
    else:
        return image
    if check:
        check_squashfs(path)
    return str(path)


def configured_image(cfg: Config, repo: Path, *, check: bool = True) -> str:
    """step_image for the configured image (--image, or the local build's tag)."""
    return step_image(
        cfg.image,
        repo=repo,
        enroot_output=cfg.enroot_output,
        lts_image=cfg.lts_image,
        check=check,
    )


def source_file(sqsh: Path) -> Path:
    """Beside a .sqsh that `uvdock image enroot` wrote: the tag it was imported from."""
    return sqsh.with_name(sqsh.name + ".image")


def imported_from(sqsh: Path) -> str:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return source_file(sqsh).read_text(encoding="utf-8").strip()
    return ""


def check_squashfs(path: Path) -> None:
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQUASHFS_MAGIC))
    except FileNotFoundError:
        raise EnvironmentUnusable(f"{path}: no such .sqsh file", hint=_IMPORT_HINT) from None
    except OSError as exc:
        raise EnvironmentUnusable(f"{path}: cannot read it ({exc.strerror})") from None
    if head != SQUASHFS_MAGIC:
        raise EnvironmentUnusable(
            f"{path} is not a squashfs image (not an enroot .sqsh)",
            hint="re-import it with `uvdock image enroot`",
        )


def container_name(image: str, repo: Path, uid: int) -> str:
    """The reusable container for a .sqsh, for one user and one checkout: keyed by the file's
    path, size, mtime and inode (a re-imported file gets a new name, so a stale unpack is
    never served), the user and the checkout's path, as `uvdock sync` writes into it and two
    checkouts or two users must never share a writable root filesystem by accident. "" for
    a registry reference (its tag may move: pyxis unpacks it each time)."""
    if not image.startswith("/"):
        return ""
    import hashlib

    try:
        st = os.stat(image)
    except OSError:
        return ""
    # The file's own path: a symlink to it (enroot-output pointing at a shared image) reuses it.
    key = f"{os.path.realpath(image)}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}"
    key += f"\0{uid}\0{os.path.realpath(repo)}"
    return NAME_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]


def own_container_name(extra_args: Sequence[str]) -> str:
    """The pyxis container engine-args name (`--container-name=NAME`), which then replaces
    uvdock's own; "" when they name none."""
    args = list(extra_args)
    for i, arg in enumerate(args):
        if arg.startswith("--container-name="):
            return arg.split("=", 1)[1]
        if arg == "--container-name" and i + 1 < len(args):
            return args[i + 1]
    return ""


def partition_of(extra_args: Sequence[str], env: Mapping[str, str]) -> str:
    """The partition srun will be asked for: engine-args' -p/--partition, else SLURM_PARTITION."""
    args = list(extra_args)
    for i, arg in enumerate(args):
        if arg in ("-p", "--partition") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--partition="):
            return arg.split("=", 1)[1]
        if arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
            return arg[2:]
    return env.get("SLURM_PARTITION", "")


def _ask(argv: list[str], env: Mapping[str, str], timeout: float = 30) -> proc.Completed:
    try:
        return proc.run(argv, env=env, check=False, timeout=timeout)
    except CommandFailed as exc:
        return proc.Completed(argv, -1, "", exc.message)


def preflight(env: Mapping[str, str], extra_args: Sequence[str]) -> None:
    """Exit 3, naming cause and fix, unless pyxis is loaded, the controller answers and the
    partition exists. About 50 ms on the happy path (no job is started)."""
    helptext = _ask(["srun", "--help"], env)
    if "--container-image" not in helptext.stdout + helptext.stderr:
        raise EnvironmentUnusable(
            "srun has no --container-image: the pyxis plugin is not loaded",
            hint="load pyxis in Slurm's plugstack.conf (or ask the cluster admins), "
            "or choose --engine docker|podman",
        )
    ping = _ask(["scontrol", "ping"], env)
    if " is UP" not in ping.stdout:
        said = (ping.stdout + ping.stderr).strip().splitlines()
        raise EnvironmentUnusable(
            f"Slurm's controller is not answering (scontrol ping: {said[-1] if said else ping.returncode})",
            hint="start slurmctld, or check SLURM_CONF on this node; `uvdock doctor` checks",
        )
    partition = partition_of(extra_args, env)
    if partition:
        found = _ask(["sinfo", "--noheader", f"--partition={partition}", "--format=%P"], env)
        if not found.stdout.strip():
            raise EnvironmentUnusable(
                f"Slurm partition {partition!r} does not exist",
                hint="name one that `sinfo --summarize` lists in engine-args (-p NAME)",
            )


# -- where a step runs --------------------------------------------------------------------------

ONCE = "once"  # a write (lock, add, remove, a relock): one task on one node
EVERY_NODE = "every node"  # sync: one task on every node of the allocation, in parallel
FOLLOW = "follow"  # run: the allocation's nodes, as srun would; engine-args pass through
# After the first task of a multi-node step of uvdock's own ends, the others get this long
# before srun ends them: a node that died is named within seconds, not when Slurm gives up.
STRAGGLER_SECONDS = 20
_USABLE = ("idle", "mix", "alloc", "comp")  # sinfo states, best first


def allocation_nodes(env: Mapping[str, str]) -> list[str]:
    """The nodes of the allocation uvdock runs in (salloc, sbatch), in Slurm's order; []
    outside one."""
    nodelist = env.get("SLURM_JOB_NODELIST", "") if env.get("SLURM_JOB_ID") else ""
    if not nodelist:
        return []
    found = _ask(["scontrol", "show", "hostnames", nodelist], env)
    return found.stdout.split() if found.ok else []


def partition_nodes(env: Mapping[str, str], extra_args: Sequence[str]) -> list[str]:
    """The nodes of the partition a new job gets (engine-args' or the default one) that
    answer and take work, idle ones first."""
    partition = partition_of(extra_args, env)
    argv = ["sinfo", "--noheader", "--Node", "--responding", "--format=%N %P %t"]
    if partition:
        argv.append(f"--partition={partition}")
    rank: dict[str, int] = {}
    for line in _ask(argv, env).stdout.splitlines():
        fields = line.split()
        if len(fields) != 3 or (not partition and not fields[1].endswith("*")):
            continue
        state = fields[2].rstrip("*~#!%$@^-")
        if state in _USABLE:
            rank.setdefault(fields[0], _USABLE.index(state))
    return sorted(rank, key=lambda node: rank[node])


def _option(extra_args: Sequence[str], short: str, long: str) -> str | None:
    args = list(extra_args)
    for i, arg in enumerate(args):
        if arg in (short, long) and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(long + "="):
            return arg.split("=", 1)[1]
        if arg.startswith(short) and len(arg) > 2 and not arg.startswith("--"):
            return arg[2:]
    return None


def step_nodes(
    env: Mapping[str, str], extra_args: Sequence[str], tasks: str, ready_on: Sequence[str]
) -> list[str]:
    """The nodes a step runs on: the allocation's (a write: its first); outside one, as many
    of the partition's as engine-args ask (one by default), those already holding the
    unpacked container (`ready_on`) first. [] when engine-args pin nodes themselves or
    Slurm cannot say: the step is then not pinned."""
    if _option(extra_args, "-w", "--nodelist") is not None:
        return []
    inside = allocation_nodes(env)
    pool = inside or sorted(partition_nodes(env, extra_args), key=lambda n: n not in ready_on)
    asked = re.match(r"\d+", _option(extra_args, "-N", "--nodes") or "")
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


def guarded(argv: list[str], env: Mapping[str, str]) -> list[str]:
    """srun ends with uvdock: it runs in a process group of its own (a Ctrl-C must reach
    uvdock alone), so a SIGKILLed uvdock would leave it, and its step, running. The kernel
    sends it SIGTERM instead, on which srun cancels its step and pyxis cleans up."""
    setpriv = proc.which("setpriv", env)
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else argv


# -- the reusable containers, per node ----------------------------------------------------------

ANY_NODE = "*"  # the record's node when Slurm could not say which (engine-args pin their own)


def _ready_path(git_dir: Path) -> Path:
    return git_dir / "uvdock" / _READY_FILE


def _entries(git_dir: Path) -> list[tuple[str, str]]:
    """The record: (node, name) whose unpack finished there. None when it is missing or
    damaged (not text): the containers are then unpacked again, not trusted. A line of
    one word (a record of before it was per node) names no node: unpacked again too."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        lines = _ready_path(git_dir).read_text(encoding="utf-8").splitlines()
        return [(f[0], f[1]) for f in (line.split() for line in lines) if len(f) == 2]
    return []


def _write(git_dir: Path, entries: Sequence[tuple[str, str]]) -> None:
    from uvdock.files.edit import atomic_write

    path = _ready_path(git_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, "".join(f"{node} {name}\n" for node, name in sorted(set(entries))))


def ready_nodes(git_dir: Path, name: str) -> list[str]:
    """The nodes where `name`'s unpack finished."""
    return [node for node, n in _entries(git_dir) if n == name]


def mark_ready(git_dir: Path, name: str, nodes: Sequence[str]) -> None:
    _write(git_dir, [*_entries(git_dir), *((node, name) for node in nodes)])


def forget(git_dir: Path, nodes: Sequence[str]) -> None:
    """Forget every container recorded on `nodes` (they were removed there)."""
    _write(git_dir, [(node, n) for node, n in _entries(git_dir) if node not in nodes])


_PYXIS_VALUED = ("image", "mounts", "workdir", "name", "save", "env")


def _without_pyxis(extra_args: Sequence[str]) -> list[str]:
    """engine-args minus pyxis's options: an enroot step must not start in a container."""
    kept: list[str] = []
    skip = False
    for arg in extra_args:
        if skip:
            skip = False
        elif arg.startswith(("--container", "--no-container")):
            skip = "=" not in arg and arg.removeprefix("--container-") in _PYXIS_VALUED
        else:
            kept.append(arg)
    return kept


def _enroot_step(extra_args: Sequence[str], nodes: Sequence[str], *command: str) -> list[str]:
    # Run where pyxis unpacks (on each node named, as this user): enroot's data path is there.
    return [
        "srun",
        "--quiet",
        *_without_pyxis(extra_args),
        *shape_args(EVERY_NODE, nodes),
        *command,
    ]


def doctor_nodes(env: Mapping[str, str], extra_args: Sequence[str]) -> list[str]:
    """Every node `doctor` looks at: the allocation's, else the partition's."""
    named = _option(extra_args, "-w", "--nodelist")
    if named:
        found = _ask(["scontrol", "show", "hostnames", named], env)
        return found.stdout.split() if found.ok else []
    return allocation_nodes(env) or partition_nodes(env, extra_args)


# Each task prints its node's name before every container name.
_LIST = 'enroot list | while read -r n; do echo "$SLURMD_NODENAME $n"; done'


def list_containers(
    env: Mapping[str, str], extra_args: Sequence[str], nodes: Sequence[str]
) -> dict[str, list[str]]:
    """The reusable containers uvdock created (their pyxis names), on each node of `nodes`
    (one task per node, at once)."""
    found = _ask(_enroot_step(extra_args, nodes, "sh", "-c", _LIST), env, timeout=120)
    if not found.ok:
        last = (found.stderr.strip().splitlines() or [f"exit {found.returncode}"])[-1]
        raise EnvironmentUnusable(f"could not list enroot containers through srun: {last}")
    listed: dict[str, list[str]] = {node: [] for node in nodes}
    prefix = PYXIS_PREFIX + NAME_PREFIX
    for line in found.stdout.splitlines():
        node, _, name = line.strip().partition(" ")
        if name.startswith(prefix):
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
    done = _ask(argv, env, timeout=120)
    if done.ok:
        return None
    where = f" on {node}" if nodes else ""
    return (
        f"could not remove {' '.join(pyxis_names)}{where} "
        f"({(done.stderr.strip().splitlines() or ['?'])[-1]}); "
        f"remove with `srun{' -w ' + node if nodes else ''} enroot remove --force NAME` "
        "or `uvdock doctor --prune`"
    )


def _listed(env: Mapping[str, str], job_name: str) -> list[str]:
    """The jobs named `job_name`, and inside an allocation its steps of that name (a step
    there is not a job of its own: scancel --name does not reach it)."""
    jobs = _ask(["squeue", "--noheader", f"--name={job_name}", "--format=%i"], env)
    found = jobs.stdout.split() if jobs.ok else []
    allocation = env.get("SLURM_JOB_ID", "")
    if allocation:
        argv = ["squeue", "--noheader", "--steps", f"--jobs={allocation}", "--format=%i %j"]
        for line in _ask(argv, env).stdout.splitlines():
            step, _, name = line.strip().partition(" ")
            if name == job_name:
                found.append(step)
    return found


def cancel_job(env: Mapping[str, str], job_name: str, *, wait: float = 15.0) -> None:
    """scancel the job (or, inside an allocation, the steps) srun started under `job_name`
    (its tasks and pyxis's clean-up end with it), and wait until squeue no longer lists
    it, so nothing of it is left when uvdock exits."""
    import time

    _ask(["scancel", "--quiet", f"--name={job_name}"], env)
    for step in _listed(env, job_name):
        if "." in step:
            _ask(["scancel", "--quiet", step], env)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not _listed(env, job_name):
            return
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
    name = placement.container
    if not name:
        return
    ready = ready_nodes(git_dir, name)
    missing = [node for node in (nodes or [ANY_NODE]) if node not in ready]
    if not missing:
        return
    where = ", ".join(missing) if nodes else "the node srun picks"
    out.info(f"unpacking {placement.image} on {where}, once, for reuse as {name}")
    argv = argv_for(list(nodes and missing))
    code = -1
    left: list[str] = []
    try:
        code = foreground(argv)
        if code == 0:
            mark_ready(git_dir, name, missing)
    finally:
        if code != 0:
            left = _remove_cut_short(argv, env, placement.extra_args, missing, PYXIS_PREFIX + name)
    if code != 0:
        raise EnvironmentUnusable(
            f"pyxis could not start {placement.image} on {where} (srun exit {code}; its "
            "messages are above)" + "".join(f"; {problem}" for problem in left),
            hint="`uvdock doctor` checks the Slurm setup",
        )


def _remove_cut_short(
    argv: Sequence[str],
    env: Mapping[str, str],
    extra_args: Sequence[str],
    nodes: Sequence[str],
    pyxis_name: str,
) -> list[str]:
    """Remove a half-written container on the nodes of its step, once that step has
    ended: after an scancel, srun returns while the step's unsquashfs may still write for
    up to KillWait, and a removal before that end leaves a partial tree the next step would
    reuse. What could not be removed is said."""
    from uvdock.run import signals

    with signals.held(reraise=False):  # a second Ctrl-C must not cut the removal
        job = next((a.split("=", 1)[1] for a in argv if a.startswith("--job-name=")), None)
        if job:
            cancel_job(env, job, wait=30.0)
        problems = [remove_containers(env, extra_args, node, [pyxis_name]) for node in nodes]
        return [problem for problem in problems if problem]


def partition_gres(env: Mapping[str, str], extra_args: Sequence[str]) -> tuple[str, str | None]:
    """(partition, its generic resources as sinfo shows them: "(null)" for none); the
    allocation's partition inside one, else engine-args' or the default one. None when
    sinfo cannot say."""
    partition = env.get("SLURM_JOB_PARTITION", "") if env.get("SLURM_JOB_ID") else ""
    partition = partition_of(extra_args, env) or partition
    argv = ["sinfo", "--noheader", "--format=%P %G"]
    if partition:
        argv.append(f"--partition={partition}")
    found = _ask(argv, env)
    gres = [
        (name.rstrip("*"), rest.strip())
        for name, _, rest in (line.strip().partition(" ") for line in found.stdout.splitlines())
        if partition or name.endswith("*")
    ]
    if not found.ok or not gres:
        return partition, None
    with_gpus = [g for _, g in gres if "gpu" in g]
    return gres[0][0], with_gpus[0] if with_gpus else gres[0][1]


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
        import shlex

        self.folder.mkdir(parents=True, exist_ok=True)
        mark = f'{shlex.quote(self.inside)}/"$SLURMD_NODENAME"'
        script = f'code=0; "$@" || code=$?; echo "$code" > {mark}; exit "$code"'
        return ["sh", "-c", script, "sh", *command]

    def discard(self) -> None:
        if self.folder is not None:
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)

    def outcome(self, code: int, out: Output) -> int:
        """Name each node that failed or never finished; the exit code: the step's, or 1
        when srun said 0 although a node never finished."""
        if self.folder is None:
            return code
        try:
            unfinished = []
            for node in self.nodes:
                try:
                    said = (self.folder / node).read_text(encoding="utf-8").strip()
                except OSError:
                    unfinished.append(node)
                    continue
                if said != "0":
                    out.error(f"{node}: exit {said}")
            for node in unfinished:
                out.error(
                    f"{node}: did not finish (the node stopped answering, or its task was "
                    f"killed); the other node(s) had ended {STRAGGLER_SECONDS} s before"
                )
        finally:
            self.discard()
        return 1 if code == 0 and unfinished else code


def allocation_argv(
    nodes: int, first: Sequence[str], extra_args: Sequence[str], gpus: int, job_name: str
) -> list[str]:
    """salloc of `nodes` nodes (the first of them `first`, where the step runs), for a
    command that then starts one step there: engine-args without pyxis's options."""
    argv = ["salloc", "--quiet", f"--nodes={nodes}", f"--job-name={job_name}"]
    argv += [f"--nodelist={node}" for node in first[:1]]
    if gpus:
        argv.append(f"--gpus-per-node={gpus}")
    return [*argv, *_without_pyxis(extra_args)]
