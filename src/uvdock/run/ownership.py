"""Whose files these are: git's safe.directory rule, the host paths a container writes,
and who gets back the files a root container wrote."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from uvdock.errors import EnvironmentUnusable, InputRefused
from uvdock.run import git, proc


def _owner(path: Path) -> int | None:
    try:
        return path.stat().st_uid
    except OSError:
        return None


def invoking_user(env: Mapping[str, str]) -> tuple[int, int] | None:
    """Who should own files written for this run: the user, or under sudo the sudoer. None
    when that is root itself (nothing to give back)."""
    uid, gid = os.getuid(), os.getgid()
    if uid == 0 and env.get("SUDO_UID", "").isdigit():
        sudo_gid = env.get("SUDO_GID", "")
        return int(env["SUDO_UID"]), int(sudo_gid if sudo_gid.isdigit() else env["SUDO_UID"])
    return None if uid == 0 else (uid, gid)


def require_safe_directory(repo: Path, env: Mapping[str, str], git_dir: Path | None = None) -> None:
    """Exit 3 when git (since 2.35.2) would refuse this repository as owned by someone else
    (not in `safe.directory`): uvdock writes into it and mounts it read-write, so it follows
    the same rule, and asks git itself when the owner differs, whose answer honours
    `safe.directory`, `*` and the SUDO_UID exception exactly as git does."""
    owner = _owner(repo)
    if {owner, _owner(git_dir or git.git_dir(repo))} - {None} <= {os.geteuid()}:
        return  # the common case costs two stat calls and no process
    argv = ["git", "-C", str(repo), "rev-parse", "--git-dir"]
    # git's messages untranslated: LC_ALL=C, and no LANGUAGE, which GNU gettext honours
    # over LC_ALL unless the locale is C.
    c_env = {k: v for k, v in {**os.environ, **env}.items() if k != "LANGUAGE"}
    done = proc.run(argv, check=False, env={**c_env, "LC_ALL": "C"})
    if done.ok or "dubious ownership" not in done.stderr:  # git's words, untranslated
        return  # git accepts it (safe.directory, or the sudo rule)
    raise EnvironmentUnusable(
        f"{repo} is owned by uid {owner}, not by you (uid {os.geteuid()}); git refuses to "
        "work in it (safe.directory), and uvdock will not write there either",
        hint=f"if you trust it: git config --global --add safe.directory {repo}",
    )


def rw_bind_sources(engine_args: tuple[str, ...]) -> list[str]:
    """Host paths that `-v SRC:DST[:OPTS]`, `--volume` or `--mount type=bind,...` in
    engine-args mount read-write (named volumes and `ro` mounts are not host paths to own)."""
    found: list[str] = []
    for index, word in enumerate(engine_args):
        if word.startswith("-v") and not word.startswith(("--", "-v=")) and len(word) > 2:
            word = "-v=" + word[2:]  # `-v/:/host`: the value attached, as engines accept
        flag, has_value, value = word.partition("=")
        if flag not in ("-v", "--volume", "--mount"):
            continue
        if not has_value:
            value = engine_args[index + 1] if index + 1 < len(engine_args) else ""
        if flag == "--mount":
            fields = dict(part.partition("=")[::2] for part in value.split(","))
            ro = fields.get("readonly", fields.get("ro"))
            # A bare `readonly` (value "") is read-only; `readonly=false` is not.
            if fields.get("type") == "bind" and (ro is None or ro.lower() in ("false", "0")):
                found.append(fields.get("source") or fields.get("src") or "")
            continue
        source, _, rest = value.partition(":")
        options = rest.partition(":")[2].split(",")
        if source.startswith("/") and not {"ro", "readonly"} & set(options):
            found.append(source)
    return found


def require_own_mounts(
    cache: str | None,
    engine_args: tuple[str, ...],
    said: Callable[[str], str],
    env: Mapping[str, str],
) -> None:
    """Exit 2 unless the uv cache and every read-write bind mount in engine-args is the user's
    own folder (never `/`, never another user's), whoever set them (`said(name)` says who)."""
    mounts = [(cache, "uv cache", "uv_cache")] if cache else []
    mounts += [(source, "mount", "engine_args") for source in rw_bind_sources(engine_args)]
    sudoer = env.get("SUDO_UID", "") if os.geteuid() == 0 else ""  # under sudo: theirs too
    for path, what, setting in mounts:
        real, fix = Path(os.path.realpath(path)), f"give the {what} a folder of your own"
        if real == Path("/"):
            raise InputRefused(
                f"{said(setting)}: the {what} would mount / read-write into the container; refused",
                hint=fix,
            )
        owner = _owner(real)
        theirs = sudoer.isdigit() and owner == int(sudoer)
        if owner is not None and owner != os.geteuid() and not theirs:
            raise InputRefused(
                f"{said(setting)}: the {what} {real} is owned by uid {owner}, not by you; it "
                "would be mounted read-write into the container; refused",
                hint=fix,
            )
