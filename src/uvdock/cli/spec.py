"""The command table and the global options, as data.

A leaf module: it imports nothing of uvdock's, so the hand scanner in cli/main.py, the argparse
parsers in cli/parse.py, the completion scripts and commands that re-read global options all
build from this one description without import circles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple


class CommandSpec(NamedTuple):
    module: str
    help: str


# (group, name) -> spec. A group's "" entry is what runs when no subcommand is named.
COMMANDS: dict[tuple[str, str], CommandSpec] = {
    ("run", ""): CommandSpec("run", "run any command in the CI container"),
    ("shell", ""): CommandSpec(
        "shell", "interactive shell in the container (docker/podman or srun + pyxis)"
    ),
    ("add", ""): CommandSpec(
        "add", "uv add in the container; prints the lock diff and the commit to make"
    ),
    ("remove", ""): CommandSpec("remove", "uv remove in the container"),
    ("lock", ""): CommandSpec(
        "lock.lock", "uv lock in the container (--check, --upgrade, --upgrade-package)"
    ),
    ("lock", "resolve"): CommandSpec(
        "lock.resolve", "resolve a uv.lock conflict: take REF's lock, relock, stage"
    ),
    ("lock", "diff"): CommandSpec(
        "lock.diff", "packages added / removed / changed between two locks"
    ),
    ("sync", ""): CommandSpec(
        "sync", "uv sync --locked in the container (profiles dev, lint, lts)"
    ),
    ("lts", "show"): CommandSpec("lts.show", "the LTS pin set as a table"),
    ("lts", "check"): CommandSpec("lts.check", "every LTS line is an exact pin, no duplicates"),
    ("lts", "drift"): CommandSpec("lts.drift", "how far the LTS pins lag behind uv.lock"),
    ("lts", "pin"): CommandSpec("lts.pin", "change LTS pins (requires --lts)"),
    ("image", "show"): CommandSpec("image.show", "every base-image pin in the repository"),
    ("image", "check"): CommandSpec("image.check", "do the managed base-image pins agree?"),
    ("image", "bump"): CommandSpec(
        "image.bump", "move the dev (or, with --lts, LTS) pins to a new tag"
    ),
    ("image", "tags"): CommandSpec(
        "image.tags", "the registry's YY.MM-py3 tags, newest first, with each lane's pin"
    ),
    ("image", "build"): CommandSpec("image.build", "build the CI image (--target main)"),
    ("image", "pull"): CommandSpec("image.pull", "pull the CI image from the GitLab registry"),
    ("image", "enroot"): CommandSpec("image.enroot", "import the CI image for enroot / pyxis"),
    ("recipe", "show"): CommandSpec("recipe.show", "every place a test case runs"),
    ("recipe", "mark-broken"): CommandSpec(
        "recipe.mark_broken", "move a test case's scopes to -broken"
    ),
    ("recipe", "unmark"): CommandSpec(
        "recipe.unmark", "undo -broken marks, uvdock's or made by hand"
    ),
    ("doctor", ""): CommandSpec(
        "doctor", "check the setup, or read a failure log and name the fix"
    ),
    ("merge-driver", "install"): CommandSpec(
        "merge_driver.install",
        "register a git merge driver for uv.lock (and, --pyproject, pyproject.toml)",
    ),
    ("merge-driver", "pyproject"): CommandSpec(
        "merge_driver.pyproject", "the pyproject.toml merge driver git runs (BASE OURS THEIRS)"
    ),
    ("completion", ""): CommandSpec(
        "completion", "print a shell completion script (bash, zsh or fish)"
    ),
    ("trust", ""): CommandSpec(
        "trust", "let this repository's uvdock configuration choose where code runs"
    ),
}

# Every command's help ends with these (a test parses each one, so they cannot rot).
EXAMPLES: dict[tuple[str, str], tuple[str, ...]] = {
    ("run", ""): (
        "uvdock run -- python -c 'import torch; print(torch.__version__)'",
        "uvdock --engine podman --container mcore-dev run -- pytest tests/unit_tests -x",
        "uvdock --dry-run run -- uv pip list",
    ),
    ("shell", ""): (
        "uvdock shell",
        "uvdock shell --gpus",
        "uvdock shell --slurm --nodes 1 --gpus-per-node 8",
    ),
    ("add", ""): (
        "uvdock add 'nvidia-modelopt>=0.29'",
        "uvdock add --group test pytest-xdist",
        "uvdock --dry-run add --optional dev 'transformer-engine>=2.4'",
    ),
    ("remove", ""): (
        "uvdock remove pygithub --group test",
        "uvdock --dry-run remove 'nvidia-modelopt'",
    ),
    ("lock", ""): (
        "uvdock lock",
        "uvdock lock --check",
        "uvdock lock --upgrade-package transformer-engine",
    ),
    ("lock", "resolve"): (
        "uvdock lock resolve --onto origin/main",
        "uvdock lock resolve --onto origin/main --no-fetch",
        "uvdock lock resolve --abort",
    ),
    ("lock", "diff"): (
        "uvdock lock diff",
        "uvdock lock diff origin/main HEAD",
        "uvdock --json lock diff HEAD~1 uv.lock",
    ),
    ("sync", ""): (
        "uvdock sync",
        "uvdock sync --profile lint",
        "uvdock sync --profile lts --lts",
    ),
    ("lts", "show"): ("uvdock lts show", "uvdock --json lts show"),
    ("lts", "check"): ("uvdock lts check", "uvdock --json lts check"),
    ("lts", "drift"): (
        "uvdock lts drift",
        "uvdock lts drift --base origin/main",
        "uvdock lts drift --all",
    ),
    ("lts", "pin"): (
        "uvdock lts pin --lts 'flashinfer-python==0.6.12'",
        "uvdock --dry-run lts pin --lts 'nvidia-modelopt==0.29.0' --add",
    ),
    ("image", "show"): ("uvdock image show", "uvdock --json image show"),
    ("image", "check"): ("uvdock image check", "uvdock --json image check"),
    ("image", "bump"): (
        "uvdock image bump 26.08-py3",
        "uvdock --dry-run image bump --latest",
        "uvdock image bump --lts 26.04-py3",
        "uvdock image bump nvcr.io/nvidia/pytorch:26.08-py3 --offline",
    ),
    ("image", "tags"): ("uvdock image tags", "uvdock image tags --limit 5"),
    ("image", "build"): (
        "uvdock image build",
        "uvdock image build --tag megatron-lm:local",
        "uvdock --dry-run --engine podman image build",
    ),
    ("image", "pull"): ("uvdock image pull", "uvdock --dry-run image pull"),
    ("image", "enroot"): (
        "uvdock image enroot",
        "uvdock image enroot --output /lustre/$USER/megatron-lm.sqsh",
        "uvdock image enroot --lts",
    ),
    ("recipe", "show"): (
        "uvdock recipe show",
        "uvdock recipe show ckpt_converter",
        "uvdock --json recipe show ckpt_converter",
    ),
    ("recipe", "mark-broken"): (
        'uvdock recipe mark-broken ckpt_converter --issue 1234 --reason "hangs on H100"',
        "uvdock recipe mark-broken gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_validation"
        " --issue '#1300' --reason OOM --platform dgx_h100",
        "uvdock --dry-run recipe mark-broken gpt_16b_perf --issue 77 --reason slow --environment dev",
    ),
    ("recipe", "unmark"): (
        "uvdock recipe unmark gpt_16b_perf",
        "uvdock --dry-run recipe unmark ckpt_converter",
    ),
    ("doctor", ""): (
        "uvdock doctor",
        "uvdock doctor job-1234.log",
        "uvdock --json doctor job-1234.log",
        "uvdock --engine srun doctor --prune",
    ),
    ("merge-driver", "install"): (
        "uvdock merge-driver install",
        "uvdock merge-driver install --pyproject",
    ),
    ("merge-driver", "pyproject"): (
        "uvdock merge-driver pyproject base.toml pyproject.toml theirs.toml",
        "uvdock merge-driver pyproject %O %A %B %P --marker-size 7",
    ),
    ("completion", ""): (
        "uvdock completion bash > ~/.local/share/bash-completion/completions/uvdock",
        "uvdock completion zsh > ~/.zfunc/_uvdock",
        "uvdock completion fish > ~/.config/fish/completions/uvdock.fish",
    ),
    ("trust", ""): (
        "uvdock trust --show",
        "uvdock trust",
        "uvdock trust --revoke",
    ),
}

# Commands that change the repository (or the venv uv syncs from it): each runs holding the
# repository lock, one writer at a time (commands.base.writing). --dry-run takes no lock.
WRITERS = frozenset(
    {
        ("add", ""),
        ("remove", ""),
        ("lock", ""),
        ("lock", "resolve"),
        ("sync", ""),
        ("lts", "pin"),
        ("image", "bump"),
        ("recipe", "mark-broken"),
        ("recipe", "unmark"),
        ("merge-driver", "install"),
    }
)

ENGINE_CHOICES = ("auto", "docker", "podman", "srun", "local")
COLOR_CHOICES = ("auto", "always", "never")


class GlobalOptionSpec(NamedTuple):
    dest: str
    flags: tuple[str, ...]
    metavar: str | None  # None: a flag that takes no value
    help: str
    choices: tuple[str, ...] | None = None


GLOBAL_OPTIONS: tuple[GlobalOptionSpec, ...] = (
    GlobalOptionSpec("repo", ("--repo",), "PATH", "repository (default: git top level of cwd)"),
    GlobalOptionSpec(
        "dry_run", ("--dry-run",), None, "show what would run or change; change nothing"
    ),
    GlobalOptionSpec("json", ("--json",), None, "machine-readable output"),
    GlobalOptionSpec("verbose", ("-v", "--verbose"), None, "show commands as they run"),
    GlobalOptionSpec("quiet", ("-q", "--quiet"), None, "only errors"),
    GlobalOptionSpec(
        "engine", ("--engine",), "NAME", "where uv runs (default: auto)", ENGINE_CHOICES
    ),
    GlobalOptionSpec("container", ("--container",), "NAME", "exec into this running container"),
    GlobalOptionSpec("image", ("--image",), "REF", "run an ephemeral container of this image"),
    GlobalOptionSpec(
        "color",
        ("--color",),
        "WHEN",
        "colour on a terminal (default: auto; NO_COLOR and FORCE_COLOR are respected)",
        COLOR_CHOICES,
    ),
)


class GlobalOptions(NamedTuple):
    """The values of GLOBAL_OPTIONS (a test keeps the two in step)."""

    repo: str | None = None
    dry_run: bool = False
    json: bool = False
    verbose: bool = False
    quiet: bool = False
    engine: str | None = None
    container: str | None = None
    image: str | None = None
    color: str | None = None


def command_groups() -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for group, name in COMMANDS:
        groups.setdefault(group, []).append(name)
    return groups


_VALUES = {flag: o for o in GLOBAL_OPTIONS if o.metavar for flag in o.flags}
_FLAGS = {flag: o.dest for o in GLOBAL_OPTIONS if not o.metavar for flag in o.flags}
_FLAGS["--version"] = "version"


def scan_global_options(words: Sequence[str]) -> tuple[dict[str, Any], list[str]] | None:
    """The global options at the front of `words`, and the words after them.

    Building argparse parsers costs more than `uvdock run` may spend in total, so the
    common case is read by hand. Anything unusual (help, an unknown option, a missing
    value, an invalid choice) returns None: argparse then decides, with its own messages.
    """
    found: dict[str, Any] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--" or word == "-" or not word.startswith("-"):
            return found, list(words[index:])
        if word in _FLAGS:
            found[_FLAGS[word]] = True
            index += 1
            continue
        name, has_value, value = word.partition("=")
        option = _VALUES.get(name)
        if option is None:
            return None
        if not has_value:
            if index + 1 >= len(words):
                return None
            value = words[index + 1]
            index += 1
        if option.choices and value not in option.choices:
            return None
        found[option.dest] = value
        index += 1
    return found, []
