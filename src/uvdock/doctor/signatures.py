"""Failure signatures -> cause and fix, and the reader that finds them in a log.

The signatures are data: each names the tool's own wording (a regular expression on one
line, plus optional patterns that must appear somewhere else in the log), the cause, the
fix and the command that applies it. Named groups of the pattern (`{group}`, `{module}`,
...) fill the texts. Add a row to SIGNATURES to teach `uvdock doctor LOG` a new failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache


@dataclass(frozen=True)
class Signature:
    name: str
    patterns: tuple[str, ...]  # any one matching a line is a hit
    cause: str
    fix: str
    command: str
    requires: tuple[str, ...] = ()  # each must match some line of the log too


@dataclass(frozen=True)
class Finding:
    signature: str
    line_number: int  # 1-based
    line: str
    cause: str
    fix: str
    command: str

    def to_json(self) -> dict[str, object]:
        return {
            "signature": self.signature,
            "line": self.line,
            "line_number": self.line_number,
            "cause": self.cause,
            "fix": self.fix,
            "command": self.command,
        }


_PROTECTED = (
    r"(?:torch|torchvision|triton|transformer[-_]engine[-_a-z0-9]*|nvidia-[a-z0-9-]+-cu1[0-9])"
)

# Network failures while fetching packages, git sources or images.
_NETWORK_CAUSE = "a download failed because the network is not reachable from where it ran: {what}"
_NETWORK_FIX = (
    "set the proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY; into the container with "
    'engine-args = ["--env", "HTTPS_PROXY", ...], for image pulls in the engine\'s own '
    "proxy settings) or point uv at an index you can reach (UV_DEFAULT_INDEX or "
    "[[tool.uv.index]]); when uv's cache already holds every package, run uv with --offline"
)
_NETWORK_COMMAND = "uvdock run -- uv sync --locked --offline"
# What makes a refused or timed-out connection a download: the tool was fetching something.
_FETCHING = (
    r"Failed to fetch|Failed to download|error sending request|Request failed after"
    r"|unable to access|curl: \(\d+\)|Retrying \(Retry|pinging container registry"
    r"|Get \"https?://|Could not fetch URL|dial tcp|Could not install packages"
)

SIGNATURES: tuple[Signature, ...] = (
    Signature(
        name="stale-lock",
        patterns=(
            r"The lockfile at `uv\.lock` needs to be updated, "
            r"but `--(?P<flag>locked|check)` was provided",
        ),
        cause="uv.lock does not match pyproject.toml (a dependency changed without relocking)",
        fix="relock inside the CI container with the container's uv, then commit uv.lock",
        command="uvdock lock",
    ),
    Signature(
        name="lock-conflict-markers",
        patterns=(r"Failed to parse:? `uv\.lock`",),
        requires=(r"^[ \t|0-9]*(?:<{7}|>{7})",),
        cause="uv.lock still holds git conflict markers (<<<<<<< ... >>>>>>>) "
        "from a merge or rebase",
        fix="never resolve uv.lock by hand: take the base branch's uv.lock "
        "and relock in the container",
        command="uvdock lock resolve",
    ),
    Signature(
        name="lock-merge-conflict",
        patterns=(r"CONFLICT \([^)\n]*\): Merge conflict in uv\.lock", r"uv\.lock: needs merge"),
        cause="uv.lock conflicted in a merge or rebase",
        fix="take the base branch's uv.lock, relock in the container and stage it",
        command="uvdock lock resolve",
    ),
    Signature(
        name="group-is-an-extra",
        patterns=(
            r"Group `(?P<group>[^`\n]+)` is not defined in the project's `dependency-groups` table",
        ),
        cause="`{group}` is not a dependency group; in Megatron-LM `dev` and `lts` are extras "
        "([project.optional-dependencies]), so `--group {group}` fails",
        fix="pass `--extra {group}` instead of `--group {group}` "
        "(uvdock sync picks the right flag)",
        command="uvdock sync --extra {group}",
    ),
    Signature(
        name="protected-package-reinstalled",
        # uv: ` Downloading torch (846.2MiB)`, ` + torch==2.7.1`; pip: `Collecting torch==2.7.1`.
        patterns=(
            r"^[ \t]*(?:Downloading|Downloaded|Building|Collecting|[+~]) "
            rf"(?P<package>{_PROTECTED})(?=[ (=<>!~]|-\d|$)",
        ),
        cause="{package} is being downloaded / reinstalled over the base image's build "
        "(a sync without the Dockerfile's --no-install-package list)",
        fix="sync with every protected package excluded (uvdock sync does); "
        "never pip install {package}",
        command="uvdock sync",
    ),
    Signature(
        name="uv-not-found",
        patterns=(
            r"uv(?<![\w-]uv): (?:command )?not found",
            r"executable file [`\"']?uv[`\"']? not found",
            r"\"uv\": executable file not found",
        ),
        cause="uv is not in this container: it is not the CI image (wrong image)",
        fix="use the image built from docker/Dockerfile.ci.dev",
        command="uvdock image build",
    ),
    Signature(
        name="module-not-found",
        patterns=(r"ModuleNotFoundError: No module named '(?P<module>[^'.\n]+)[^'\n]*'",),
        cause="`{module}` is not installed in the uv-managed venv (/opt/venv): "
        "a bare `pip install` puts it elsewhere "
        "and the next `uv sync` removes what uv.lock does not list",
        fix="declare the dependency with uv add (in the container) and sync; "
        "never bare pip install (the distribution name may differ from the module name)",
        command="uvdock add {module}",
    ),
    Signature(
        name="no-space-left",
        patterns=(r"No space left on device",),
        cause="the disk filled up; uv's cache in the container (/root/.cache/uv) "
        "is the usual culprit",
        fix="mount a host cache dir (-v $HOME/.cache/uv:/root/.cache/uv; uvdock does this for you) "
        "and free space there (`uv cache prune`)",
        command="uvdock sync",
    ),
    Signature(
        name="build-secret-missing",
        patterns=(
            r"/run/secrets/(?P<secret>[A-Za-z0-9_]+): No such file or directory",
            r"secret (?P<secret>[A-Za-z0-9_]+):? not found",
        ),
        cause="the build reached the `jet` stage of Dockerfile.ci.dev, which needs the internal "
        "secret {secret}",
        fix="build with --target main to stop at the public stage (uvdock image build always does)",
        command="uvdock image build",
    ),
    Signature(
        name="registry-access-forbidden",
        patterns=(r"access(?<!\waccess) forbidden\b",),
        cause="the registry address has an explicit port (e.g. :5005), or you are not logged in",
        fix="use the registry host without a port (and `docker login HOST`)",
        command="uvdock image pull",
    ),
    Signature(
        name="network-name-resolution",
        # curl/git: `Could not resolve host: github.com`; uv: `dns error: failed to lookup
        # address information: ...`; pip: `Failed to resolve 'pypi.org'`; Go clients (docker,
        # podman): `dial tcp: lookup nvcr.io on 127.0.0.53:53: no such host`.
        patterns=(
            r"Could not resolve (?:host|proxy)\b",
            r"\bdns error\b",
            r"[Tt]emporary failure in name resolution",
            r"Name or service not known",
            r"nodename nor servname provided",
            r"\blookup [^\s:]+(?: on \S+)?: no such host",
            r"Failed to resolve '[^'\n]+'",
            r"getaddrinfo failed",
        ),
        cause=_NETWORK_CAUSE.format(
            what="a host name could not be resolved (no DNS, or a "
            "network that only reaches the internet through a proxy)"
        ),
        fix=_NETWORK_FIX,
        command=_NETWORK_COMMAND,
    ),
    Signature(
        name="network-connect",
        # uv: `tcp connect error: Connection refused (os error 111)`, `operation timed out`,
        # `network timeout. Try increasing UV_HTTP_TIMEOUT`; curl: `Failed to connect to H port
        # 443`, `Connection timed out`; Go: `dial tcp 1.2.3.4:443: i/o timeout`. A refused unix
        # socket is a daemon that is not running, not the network.
        patterns=(
            r"^(?!.*\bunix\b).*?\b[Cc]onnection refused",
            r"^(?!.*\bunix\b).*?\b(?:[Cc]onnection|[Oo]peration|[Rr]ead|[Cc]onnect) timed out",
            r"\bi/o timeout\b",
            r"\bnetwork timeout\b",
            r"[Nn]etwork is unreachable",
            r"Failed to connect to \S+ port \d+",
        ),
        requires=(_FETCHING,),
        cause=_NETWORK_CAUSE.format(what="a connection was refused or timed out"),
        fix=_NETWORK_FIX + "; for slow links raise UV_HTTP_TIMEOUT",
        command=_NETWORK_COMMAND,
    ),
    Signature(
        name="copy-pr-bot-deploy",
        patterns=(
            r"had a problem deploying to[ \t]+test\b",
            r"copy-pr-bot.*had a problem deploying",
        ),
        cause="copy-pr-bot failed to deploy the PR to the test environment "
        "(a transient CI failure)",
        fix="push another commit to trigger it again (an empty one is fine)",
        command="git commit --allow-empty -m 'ci: retrigger' && git push",
    ),
    Signature(
        name="heredoc-unsupported",
        # buildah (podman < 5): `Unknown instruction: "APT-GET"`; Docker's legacy builder:
        # `unknown instruction: APT-GET`. Each line of a `RUN <<EOF` body read as an instruction.
        patterns=(r"[Uu]nknown instruction:? \"?(?P<word>[A-Za-z][\w-]*)",),
        cause="the image builder cannot parse the Dockerfile's heredocs (`RUN <<EOF`): it read "
        "the body line `{word}` as an instruction (podman < 5 / buildah < 1.35, or docker "
        "without BuildKit)",
        fix="build with podman 5 or later (buildah >= 1.35), or with docker and BuildKit (the "
        "buildx plugin, DOCKER_BUILDKIT not 0); `uvdock image build` checks this before building",
        command="uvdock --engine docker image build",
    ),
)

# Lines worth showing when no signature matched.
ERROR_LINE = re.compile(r"[Ee]rror:|Error\b|ERROR|Traceback|FAILED|fatal:")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\n]*\x07")
# CI log prefixes: GitHub Actions `2024-05-01T10:00:00.1234567Z `, GitLab `[12:00:00] `.
_TIMESTAMP = re.compile(r"^(?:\d{4}-\d\d-\d\dT[\d:.]+Z[ \t]|\[\d\d:\d\d:\d\d\][ \t])", re.MULTILINE)
# What a terminal shows of a line redrawn with carriage returns: the text after the last one.
_REDRAWN = re.compile(r"^[^\n]*\r(?=[^\n])", re.MULTILINE)
_TIMESTAMP_PROBE = 64 * 1024
MAX_ERROR_LINES = 40


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)
    error_lines: list[tuple[int, str]] = field(default_factory=list)  # when nothing matched


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    # Whole-log search, one C-level scan per pattern: `^` anchors at every line start.
    return re.compile(pattern, re.MULTILINE)


def clean_text(text: str) -> str:
    """The log without colour codes, CI timestamps or carriage-return redraws; "\n" lines."""
    # Each pass costs a scan of the whole log, so it runs only when its mark is there.
    if "\r" in text:
        text = _REDRAWN.sub("", text.replace("\r\n", "\n"))
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    # CI runners stamp every line: looking at the head of the log is enough to know.
    if _TIMESTAMP.search(text, 0, _TIMESTAMP_PROBE):
        text = _TIMESTAMP.sub("", text)
    return text


def _fill(template: str, values: dict[str, str]) -> str:
    return template.format_map(_Defaults(values))


class _Defaults(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return f"<{key}>"


class _Log:
    def __init__(self, text: str) -> None:
        self.text = clean_text(text)

    def line_number(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def line_at(self, offset: int) -> str:
        start = self.text.rfind("\n", 0, offset) + 1
        end = self.text.find("\n", offset)
        return self.text[start : end if end >= 0 else len(self.text)]


def _first_hit(signature: Signature, log: _Log) -> re.Match[str] | None:
    hits = [m for p in signature.patterns if (m := _compiled(p).search(log.text))]
    return min(hits, key=lambda m: m.start()) if hits else None


def diagnose(text: str, signatures: tuple[Signature, ...] = SIGNATURES) -> Diagnosis:
    """Every signature found in the log (first hit of each, in log order)."""
    log = _Log(text)
    findings: list[Finding] = []
    for signature in signatures:
        match = _first_hit(signature, log)
        if match is None or not all(_compiled(p).search(log.text) for p in signature.requires):
            continue
        groups = {k: v for k, v in match.groupdict().items() if v is not None}
        number = log.line_number(match.start())
        findings.append(
            Finding(
                signature=signature.name,
                line_number=number,
                line=log.line_at(match.start()).strip(),
                cause=_fill(signature.cause, groups),
                fix=_fill(signature.fix, groups),
                command=_fill(signature.command, groups),
            )
        )
    findings.sort(key=lambda f: f.line_number)
    diagnosis = Diagnosis(findings)
    if not findings:
        for match in ERROR_LINE.finditer(log.text):
            number = log.line_number(match.start())
            if diagnosis.error_lines and diagnosis.error_lines[-1][0] == number:
                continue
            diagnosis.error_lines.append((number, log.line_at(match.start()).strip()))
            if len(diagnosis.error_lines) == MAX_ERROR_LINES:
                break
    return diagnosis
