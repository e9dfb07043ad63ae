"""The command table and the global options, as data: one entry per command, each global
option declared once. A leaf (it imports nothing of uvdock's): the hand scanner below, the
argparse parsers (cli/parse.py) and the completion scripts all build from it, and
`uvdock --help` imports no command module."""

from collections.abc import Sequence
from typing import Annotated, Any, NamedTuple


class CommandSpec(NamedTuple):
    help: str  # the one line of `uvdock --help`
    examples: tuple[str, ...]  # the end of the command's help (a test runs each one)
    # Changes the repository (or the venv uv syncs from it): runs holding the repository
    # lock, one writer at a time (commands.base.writing). --dry-run takes no lock.
    writes: bool = False
    # Under uvdock.commands, imported only when the command runs; "" is the key's words
    # (("image", "bump") is image.bump).
    module: str = ""


# (group, name) -> spec. A group's "" entry is what runs when no subcommand is named.
_TABLE: dict[tuple[str, str], CommandSpec] = {
    ("run", ""): CommandSpec(
        "run any command in the CI container",
        (
            "uvdock run -- python -c 'import torch; print(torch.__version__)'",
            "uvdock --engine podman --container mcore-dev run -- pytest tests/unit_tests -x",
            "uvdock --dry-run run -- uv pip list",
        ),
    ),
    ("shell", ""): CommandSpec(
        "interactive shell in the container (docker/podman or srun + pyxis)",
        ("uvdock shell", "uvdock shell --gpus", "uvdock shell --slurm --nodes 1 --gpus-per-node 8"),
    ),
    ("add", ""): CommandSpec(
        "uv add in the container; prints the lock diff and the commit to make",
        (
            "uvdock add 'nvidia-modelopt>=0.29'",
            "uvdock add --group test pytest-xdist",
            "uvdock --dry-run add --optional dev 'transformer-engine>=2.4'",
        ),
        writes=True,
    ),
    ("remove", ""): CommandSpec(
        "uv remove in the container",
        ("uvdock remove pygithub --group test", "uvdock --dry-run remove 'nvidia-modelopt'"),
        writes=True,
    ),
    ("lock", ""): CommandSpec(
        "uv lock in the container (--check, --upgrade, --upgrade-package)",
        ("uvdock lock", "uvdock lock --check", "uvdock lock --upgrade-package transformer-engine"),
        writes=True,
        module="lock.lock",  # lock/ holds the group
    ),
    ("lock", "resolve"): CommandSpec(
        "resolve a uv.lock conflict: take REF's lock, relock, stage",
        (
            "uvdock lock resolve --onto origin/main",
            "uvdock lock resolve --onto origin/main --no-fetch",
            "uvdock lock resolve --abort",
        ),
        writes=True,
    ),
    ("lock", "diff"): CommandSpec(
        "packages added / removed / changed between two locks",
        (
            "uvdock lock diff",
            "uvdock lock diff origin/main HEAD",
            "uvdock --json lock diff HEAD~1 uv.lock",
        ),
    ),
    ("sync", ""): CommandSpec(
        "uv sync --locked in the container (profiles dev, lint, lts)",
        ("uvdock sync", "uvdock sync --profile lint", "uvdock sync --profile lts --lts"),
        writes=True,
    ),
    ("lts", "show"): CommandSpec(
        "the LTS pin set as a table", ("uvdock lts show", "uvdock --json lts show")
    ),
    ("lts", "check"): CommandSpec(
        "every LTS line is an exact pin, no duplicates",
        ("uvdock lts check", "uvdock --json lts check"),
    ),
    ("lts", "drift"): CommandSpec(
        "how far the LTS pins lag behind uv.lock",
        ("uvdock lts drift", "uvdock lts drift --base origin/main", "uvdock lts drift --all"),
    ),
    ("lts", "pin"): CommandSpec(
        "change LTS pins (requires --lts)",
        (
            "uvdock lts pin --lts 'flashinfer-python==0.6.12'",
            "uvdock --dry-run lts pin --lts 'nvidia-modelopt==0.29.0' --add",
        ),
        writes=True,
    ),
    ("image", "show"): CommandSpec(
        "every base-image pin in the repository",
        ("uvdock image show", "uvdock --json image show"),
    ),
    ("image", "check"): CommandSpec(
        "do the managed base-image pins agree?",
        ("uvdock image check", "uvdock --json image check"),
    ),
    ("image", "bump"): CommandSpec(
        "move the dev (or, with --lts, LTS) pins to a new tag",
        (
            "uvdock image bump 26.08-py3",
            "uvdock --dry-run image bump --latest",
            "uvdock image bump --lts 26.04-py3",
            "uvdock image bump nvcr.io/nvidia/pytorch:26.08-py3 --offline",
        ),
        writes=True,
    ),
    ("image", "tags"): CommandSpec(
        "the registry's YY.MM-py3 tags, newest first, with each lane's pin",
        ("uvdock image tags", "uvdock image tags --limit 5"),
    ),
    ("image", "build"): CommandSpec(
        "build the CI image (--target main)",
        (
            "uvdock image build",
            "uvdock image build --tag megatron-lm:local",
            "uvdock --dry-run --engine podman image build",
        ),
    ),
    ("image", "pull"): CommandSpec(
        "pull the CI image from the GitLab registry",
        ("uvdock image pull", "uvdock --dry-run image pull"),
    ),
    ("image", "enroot"): CommandSpec(
        "import the CI image for enroot / pyxis",
        (
            "uvdock image enroot",
            "uvdock image enroot --output /lustre/$USER/megatron-lm.sqsh",
            "uvdock image enroot --lts",
        ),
    ),
    ("recipe", "show"): CommandSpec(
        "every place a test case runs",
        (
            "uvdock recipe show",
            "uvdock recipe show ckpt_converter",
            "uvdock --json recipe show ckpt_converter",
        ),
    ),
    ("recipe", "mark-broken"): CommandSpec(
        "move a test case's scopes to -broken",
        (
            'uvdock recipe mark-broken ckpt_converter --issue 1234 --reason "hangs on H100"',
            "uvdock recipe mark-broken gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_validation --issue '#1300' --reason OOM --platform dgx_h100",
            "uvdock --dry-run recipe mark-broken gpt_16b_perf --issue 77 --reason slow --environment dev",
        ),
        writes=True,
    ),
    ("recipe", "unmark"): CommandSpec(
        "undo -broken marks, uvdock's or made by hand",
        ("uvdock recipe unmark gpt_16b_perf", "uvdock --dry-run recipe unmark ckpt_converter"),
        writes=True,
    ),
    ("doctor", ""): CommandSpec(
        "check the setup, or read a failure log and name the fix",
        (
            "uvdock doctor",
            "uvdock doctor job-1234.log",
            "uvdock --json doctor job-1234.log",
            "uvdock --engine srun doctor --prune",
        ),
    ),
    ("merge-driver", "install"): CommandSpec(
        "register a git merge driver for uv.lock (and, --pyproject, pyproject.toml)",
        ("uvdock merge-driver install", "uvdock merge-driver install --pyproject"),
        writes=True,
    ),
    ("merge-driver", "pyproject"): CommandSpec(
        "the pyproject.toml merge driver git runs (BASE OURS THEIRS)",
        (
            "uvdock merge-driver pyproject base.toml pyproject.toml theirs.toml",
            "uvdock merge-driver pyproject %O %A %B %P --marker-size 7",
        ),
    ),
    ("completion", ""): CommandSpec(
        "print a shell completion script (bash, zsh or fish)",
        (
            "uvdock completion bash > ~/.local/share/bash-completion/completions/uvdock",
            "uvdock completion zsh > ~/.zfunc/_uvdock",
            "uvdock completion fish > ~/.config/fish/completions/uvdock.fish",
        ),
    ),
    ("trust", ""): CommandSpec(
        "let this repository's uvdock configuration choose where code runs",
        ("uvdock trust --show", "uvdock trust", "uvdock trust --revoke"),
    ),
}
COMMANDS = {
    key: spec._replace(module=spec.module or ".".join(filter(None, key)).replace("-", "_"))
    for key, spec in _TABLE.items()
}


ENGINE_CHOICES = ("auto", "docker", "podman", "srun", "local")


class Option(NamedTuple):
    """How a global option is written; `dest` is its field of GlobalOptions."""

    flags: tuple[str, ...]
    metavar: str | None  # None: a flag that takes no value
    help: str
    choices: tuple[str, ...] | None = None
    dest: str = ""


class GlobalOptions(NamedTuple):
    """The global options: each field is one, with its type, default and how it is written."""

    repo: Annotated[
        str | None, Option(("--repo",), "PATH", "repository (default: git top level of cwd)")
    ] = None
    dry_run: Annotated[
        bool, Option(("--dry-run",), None, "show what would run or change; change nothing")
    ] = False
    json: Annotated[bool, Option(("--json",), None, "machine-readable output")] = False
    verbose: Annotated[bool, Option(("-v", "--verbose"), None, "show commands as they run")] = False
    quiet: Annotated[bool, Option(("-q", "--quiet"), None, "only errors")] = False
    engine: Annotated[
        str | None,
        Option(("--engine",), "NAME", "where uv runs (default: auto)", ENGINE_CHOICES),
    ] = None
    container: Annotated[
        str | None, Option(("--container",), "NAME", "exec into this running container")
    ] = None
    image: Annotated[
        str | None, Option(("--image",), "REF", "run an ephemeral container of this image")
    ] = None
    color: Annotated[
        str | None,
        Option(
            ("--color",),
            "WHEN",
            "colour on a terminal (default: auto; NO_COLOR and FORCE_COLOR are respected)",
            ("auto", "always", "never"),
        ),
    ] = None


GLOBAL_OPTIONS: tuple[Option, ...] = tuple(
    hint.__metadata__[0]._replace(dest=name) for name, hint in GlobalOptions.__annotations__.items()
)


def command_groups() -> dict[str, list[str]]:
    """group -> its commands' names (a function: `uvdock --version` and `run` need none)."""
    groups: dict[str, list[str]] = {}
    for group, name in COMMANDS:
        groups.setdefault(group, []).append(name)
    return groups


_VALUES = {flag: o for o in GLOBAL_OPTIONS if o.metavar for flag in o.flags}
_FLAGS = {flag: o.dest for o in GLOBAL_OPTIONS if not o.metavar for flag in o.flags}
_FLAGS["--version"] = "version"


def scan_global_options(words: Sequence[str]) -> tuple[dict[str, Any], list[str]] | None:
    """The global options at the front of `words`, and the words after them: building
    argparse parsers costs more than `uvdock run` may spend in total. Anything unusual (help,
    an unknown option, a missing value, an invalid choice) is None: argparse decides."""
    found: dict[str, Any] = {}
    rest = list(words)
    while rest and rest[0].startswith("-") and rest[0] not in ("--", "-"):
        word = rest.pop(0)
        name, has_value, value = word.partition("=")
        option = _VALUES.get(name)
        if word in _FLAGS:
            found[_FLAGS[word]] = True
            continue
        if option is None or not (has_value or rest):
            return None
        value = value if has_value else rest.pop(0)
        if option.choices and value not in option.choices:
            return None
        found[option.dest] = value
    return found, rest
