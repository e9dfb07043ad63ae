"""Failure signatures -> cause and fix (logscan.py reads a log and finds them).

The signatures are data: each names the tool's own wording (a regular expression on one
line, plus optional patterns that must appear somewhere else in the log), the cause, the
fix and the command that applies it. Named groups of the pattern (`{group}`, `{module}`,
...) fill the texts. Add a row to SIGNATURES to teach `uvdock doctor LOG` a new failure.

Patterns run over logs of any size, so each must take linear time on any line: a pattern
never spans lines (no class that matches "\n"), a scan that follows a literal is bounded
(`{1,200}`) or stops at a character that starts the next try, and `.*` runs only from an
anchor (`^`) or inside an atomic group; a condition on the whole line is `unless`, checked
on hit lines only. tests/doctor/test_linear_patterns.py checks it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Advice:
    """Cause, fix and command for when the package a hit names (its `module` group) is one
    the project declares: `{declared_in}`, `{distribution}` and `{sync}` fill the texts."""

    cause: str
    fix: str
    command: str


@dataclass(frozen=True)
class Signature:
    name: str
    patterns: tuple[str, ...]  # any one matching a line is a hit
    cause: str
    fix: str
    command: str
    requires: tuple[str, ...] = ()  # each must match some line of the log too
    unless: str | None = None  # a hit whose line matches this is no hit
    if_declared: Advice | None = None
    # For a `module` no distribution on PyPI provides (doctor/import_names.py).
    if_no_distribution: Advice | None = None


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
        requires=(r"^[ \t|0-9]*<<<<<<<|^[ \t|0-9]*>>>>>>>",),
        cause="uv.lock still holds git conflict markers (<<<<<<< ... >>>>>>>) "
        "from a merge or rebase",
        fix="never resolve uv.lock by hand: take the base branch's uv.lock "
        "and relock in the container",
        command="uvdock lock resolve",
    ),
    Signature(
        name="lock-merge-conflict",
        patterns=(
            r"CONFLICT \([^)\n]{0,80}\): Merge conflict in uv\.lock",
            r"uv\.lock: needs merge",
        ),
        cause="uv.lock conflicted in a merge or rebase",
        fix="take the base branch's uv.lock, relock in the container and stage it",
        command="uvdock lock resolve",
    ),
    Signature(
        name="group-is-an-extra",
        patterns=(
            r"Group `(?P<group>[^`\n]{1,200})` is not defined in the project's `dependency-groups` table",
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
        # `No module named 'a.b.c'`: the top-level package is what a distribution provides.
        patterns=(
            r"ModuleNotFoundError: No module named "
            r"'(?P<module>[^'.\n]{1,200})(?P<submodule>\.[^'\n]{0,300})?'",
        ),
        cause="`{module}` is not installed in the uv-managed venv (/opt/venv): "
        "a bare `pip install` puts it elsewhere "
        "and the next `uv sync` removes what uv.lock does not list",
        fix="declare the dependency with uv add (in the container) and sync; "
        "never bare pip install (the distribution name may differ from the module name)",
        command="uvdock add {distribution}",
        if_no_distribution=Advice(
            cause="`{module}` is not installed where this ran, and no distribution on PyPI "
            "provides it to `uv add` (NVIDIA Apex is built from source; the NGC PyTorch base "
            "images ship it)",
            fix="run in the CI image built on the NGC base image, which provides it; "
            "elsewhere build it from source (github.com/NVIDIA/apex)",
            command="uvdock run -- python -c 'import {module}'",
        ),
        if_declared=Advice(
            cause="`{module}` is declared by the project ({declared_in}: `{distribution}`) but "
            "not installed where this ran: the environment is behind uv.lock (or the process "
            "ran another interpreter than the uv-managed venv)",
            fix="sync the environment from uv.lock in the container; there is nothing to add",
            command="{sync}",
        ),
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
            r"/run/secrets/(?P<secret>[A-Za-z0-9_]{1,200}): No such file or directory",
            r"secret (?P<secret>[A-Za-z0-9_]{1,200}):? not found",
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
        name="registry-name-resolution",
        # An image pull (podman, the docker CLI, dockerd): `Get "https://HOST/v2/": dial tcp:
        # lookup HOST on 10.0.0.53:53: no such host`. uv's --offline does not help a pull.
        patterns=(r'/v2/"?:? dial tcp: lookup [^\s:]{1,300}(?: on \S{1,300})?: no such host',),
        cause="the image registry's host name does not resolve from here: name resolution "
        "failed (DNS, VPN or proxy), not a login problem",
        fix="check the registry host of the image (for uvdock image pull: the `gitlab` remote); "
        "connect the VPN, or give the engine its proxy (podman: HTTPS_PROXY in its environment; "
        "dockerd: its systemd proxy settings)",
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
            r"\blookup [^\s:]{1,300}(?: on \S{1,300})?: no such host",
            r"Failed to resolve '[^'\n]{1,300}'",
            r"getaddrinfo failed",
        ),
        unless=r'/v2/"?:? dial tcp: lookup',  # an image pull: registry-name-resolution
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
            r"\b[Cc]onnection refused",
            r"\b(?:[Cc]onnection|[Oo]peration|[Rr]ead|[Cc]onnect) timed out",
            r"\bi/o timeout\b",
            r"\bnetwork timeout\b",
            r"[Nn]etwork is unreachable",
            r"Failed to connect to \S{1,300} port \d",
        ),
        requires=(_FETCHING,),
        unless=r"\bunix\b",
        cause=_NETWORK_CAUSE.format(what="a connection was refused or timed out"),
        fix=_NETWORK_FIX + "; for slow links raise UV_HTTP_TIMEOUT",
        command=_NETWORK_COMMAND,
    ),
    Signature(
        name="tls-interception",
        # uv (rustls): `invalid peer certificate: UnknownIssuer`; pip/Python: `[SSL:
        # CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate in
        # certificate chain`; curl/git: `SSL certificate problem: unable to get local issuer
        # certificate`, Debian's git: `server certificate verification failed`; Go (docker,
        # podman): `x509: certificate signed by unknown authority`.
        patterns=(
            r"invalid peer certificate: UnknownIssuer",
            r"[Cc]ertificate verify failed",
            r"CERTIFICATE_VERIFY_FAILED",
            r"self[- ]signed certificate\b",
            r"unable to get local issuer certificate",
            r"server certificate verification failed",  # git built with GnuTLS (Debian)
            r"x509: certificate signed by unknown authority",
        ),
        cause="TLS interception: something on this network (a corporate proxy or firewall) "
        "re-signs HTTPS with its own certificate authority, which uv in the container does "
        "not trust; it is not a network outage",
        fix="give uv that CA inside the container: mount the CA file and point SSL_CERT_FILE "
        "at it, through engine-args in your own environment or user config (UVDOCK_ENGINE_ARGS, "
        "as below); or, when the image's system store already holds the CA, pass "
        "--env UV_SYSTEM_CERTS=1 the same way (UV_NATIVE_TLS=1 for uv before 0.9). For an image pull the engine on the host needs "
        "the CA (/etc/containers/certs.d/HOST/ca.crt, /etc/docker/certs.d/HOST/ca.crt)",
        command="UVDOCK_ENGINE_ARGS='-v /path/to/corp-ca.pem:/etc/ssl/certs/corp.pem:ro "
        "--env SSL_CERT_FILE=/etc/ssl/certs/corp.pem' uvdock run -- uv sync --locked",
    ),
    Signature(
        name="copy-pr-bot-deploy",
        patterns=(
            r"had a problem deploying to[ \t]+test\b",
            # from the line start, atomic: repeated `copy-pr-bot` is one try, not one per copy
            r"^(?>.*?copy-pr-bot).*had a problem deploying",
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
