"""Stop what an interrupted command started, one routine per placement, and wait until it
is gone: None when nothing is left running, else a sentence saying what could not be stopped
(the caller shows it; uvdock still exits 130)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping

from uvdock.run import proc

RUN_MARKER = "UVDOCK_RUN"

# `docker exec` has no signal proxy, so every process whose environment carries
# UVDOCK_RUN=<id> gets SIGINT, then SIGKILL after the grace period; the script exits 0 only
# once none is left. $0 marker name, $1 run id, $2 grace in tenths of a second.
_STOP_TAGGED = r"""
tag="$0=$1"; grace="$2"
tagged() {
  for d in /proc/[0-9]*; do
    if tr "\0" "\n" < "$d/environ" 2>/dev/null | grep -qx "$tag"; then echo "${d#/proc/}"; fi
  done
}
pids=$(tagged); [ -z "$pids" ] && exit 0
kill -INT $pids 2>/dev/null
n=0
while [ -n "$(tagged)" ]; do
  n=$((n + 1))
  if [ "$n" -eq "$grace" ]; then kill -KILL $(tagged) 2>/dev/null; fi
  if [ "$n" -gt $((grace + 20)) ]; then tagged; exit 1; fi
  sleep 0.1
done
exit 0
"""


def stop_tagged(
    engine: str, container: str, run_id: str, env: Mapping[str, str], *, grace: float = 10.0
) -> str | None:
    argv = [engine, "exec", container, "sh", "-c", _STOP_TAGGED, RUN_MARKER, run_id]
    done = proc.ask([*argv, str(int(grace * 10))], env, grace + 20)
    failed, pids = f"could not stop the command in container {container}", done.stdout.split()
    why = "timed out" if done.returncode == -1 else pids and f"processes {' '.join(pids)} still run"
    return None if done.ok else f"{failed} ({why})" if why else f"{failed}: {done.stderr.strip()}"


def container_exists(engine: str, name: str, env: Mapping[str, str]) -> bool:
    # `ps -a` rather than `inspect`: podman's inspect already fails while a container is
    # being removed, and `ps -a` lists it until it is truly gone. No answer: assume the worst.
    found = proc.ask([engine, "ps", "--all", "--no-trunc", "--format", "{{.Names}}"], env)
    return not found.ok or name in found.stdout.split()


def _running(engine: str, name: str, env: Mapping[str, str]) -> bool:
    """Whether the container still runs. An engine that cannot say (busy, or the container
    is being removed) is asked whether it still lists it: never taken as ended on a guess."""
    argv = [engine, "container", "inspect", "--format", "{{.State.Running}}", "--", name]
    found = proc.ask(argv, env)
    return found.stdout.strip() == "true" if found.ok else container_exists(engine, name, env)


def stop_container(
    engine: str,
    name: str,
    env: Mapping[str, str],
    *,
    grace: float = 10.0,
    log: Callable[[str], None] = lambda step: None,
) -> str | None:
    """Interrupt the command as a terminal's Ctrl-C would: SIGINT to the container's init,
    which passes it to the command's whole process group (`-g`: see engines.run_argv). Give
    it `grace` seconds to end by itself, then the engine's stop (SIGTERM, SIGKILL 5 s later),
    then remove the container and wait until the engine no longer knows it. `log` hears each
    step (`uvdock -v`). Never through the engine client: rootless podman 4.3 answers a
    signal to its client by ending the container outright, with no signal to the command."""
    if not container_exists(engine, name, env):
        return None
    ends = time.monotonic() + grace
    code = proc.ask([engine, "kill", "--signal", "INT", "--", name], env).returncode
    log(f"container {name}: SIGINT to the command's process group (exit {code})")
    # Until the command has ended by itself: a `wait` that fails at once (a busy engine)
    # must not let the removal below cut its clean-up short.
    while (running := _running(engine, name, env)) and time.monotonic() < ends:
        waited = proc.ask([engine, "wait", "--", name], env, max(0.5, ends - time.monotonic()))
        if waited.returncode:
            time.sleep(0.2)
    if running:
        code = proc.ask([engine, "stop", "--time", "5", "--", name], env).returncode
        log(f"container {name}: still running after {grace:g} s, stopped (exit {code})")
    deadline = time.monotonic() + 10
    while container_exists(engine, name, env):
        if time.monotonic() > deadline:
            return f"could not stop container {name}; stop it with `{engine} rm --force {name}`"
        proc.ask([engine, "rm", "--force", "--", name], env)
        time.sleep(0.2)
    log(f"container {name}: gone")
    return None


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name: state, ppid, pgrp, session ... ([19]: start)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return fields if len(fields) > 19 else None


def group_identity(pgid: int) -> dict[str, str]:
    """What identifies the process group `pgid` leads, for `stop_group` after a kill:
    its session and the leader's start time (a pid number alone may be reused)."""
    fields = _stat(pgid)
    return {"pgid": str(pgid)} | ({"sid": fields[3], "start": fields[19]} if fields else {})


def _members(identity: Mapping[str, str]) -> list[int]:
    """Living processes of the recorded group: same group and session, started no earlier
    than its leader (a reused number belongs to a later, unrelated group)."""
    pgid, sid = identity.get("pgid", ""), identity.get("sid", "")
    start = int(identity.get("start", "0") or 0)
    stats = ((int(entry), _stat(int(entry))) for entry in os.listdir("/proc") if entry.isdigit())
    return [
        pid
        for pid, f in stats
        if f and f[0] not in "ZX" and f[2] == pgid and sid in ("", f[3]) and int(f[19]) >= start
    ]


def stop_group(identity: Mapping[str, str], *, grace: float = 10.0) -> str | None:
    """Stop every process of a recorded local process group (SIGINT, SIGKILL after `grace`)
    and wait until none is left; or a sentence naming the pids that could not be stopped."""
    pgid = int(identity.get("pgid", "0") or 0)
    if pgid <= 1:
        return None
    deadline = time.monotonic() + grace
    sent: signal.Signals | None = None
    while members := _members(identity):
        late = time.monotonic() > deadline
        if late and sent == signal.SIGKILL and time.monotonic() > deadline + 5:
            pids = " ".join(map(str, members))
            return f"could not stop the relock's process group {pgid} (pids {pids} still run)"
        wanted = signal.SIGKILL if late else signal.SIGINT  # SIGINT: as Ctrl-C would
        if sent != wanted or wanted == signal.SIGKILL:
            try:
                os.killpg(pgid, wanted)
            except PermissionError:
                return f"not allowed to stop the relock's process group {pgid} (pid {members[0]})"
            except ProcessLookupError:
                pass
            sent = wanted
        time.sleep(0.05)
    return None
