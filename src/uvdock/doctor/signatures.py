"""Failure signatures -> cause and fix: a row of SIGNATURES teaches `uvdock doctor LOG` one.
Named groups of the tool's own wording (`{group}`, `{module}`, ...) fill the texts.

Patterns run over logs of any size, so each takes linear time on any line: it never spans
lines (no class matches "\n"), a scan after a literal is bounded (`{1,200}`) or stops at a
character that starts the next try, and `.*` runs only from `^` or in an atomic group.
tests/doctor/test_linear_patterns.py checks it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NamedTuple


class Advice(NamedTuple):
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
    requires: tuple[str, ...] = ()  # patterns that must each match some other line
    unless: str | None = None  # a hit whose line matches it is none
    # When the project declares the hit's `module`: `{declared_in}`, `{distribution}`, `{sync}`.
    if_declared: Advice | None = None
    # For a `module` no distribution on PyPI provides (doctor/import_names.py).
    if_no_distribution: Advice | None = None


@dataclass(frozen=True)
class Finding:
    signature: str
    line: str
    line_number: int  # 1-based
    cause: str
    fix: str
    command: str

    def to_json(self) -> dict[str, object]:
        return asdict(self)


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

# (name, patterns, cause, fix, command, then the optional fields by name)
SIGNATURES: tuple[Signature, ...] = (
    Signature(
        "stale-lock",
        (
            r"The lockfile at `uv\.lock` needs to be updated, "
            r"but `--(?P<flag>locked|check)` was provided",
        ),
        "uv.lock does not match pyproject.toml (a dependency changed without relocking)",
        "relock inside the CI container with the container's uv, then commit uv.lock",
        "uvdock lock",
    ),
    Signature(
        "lock-conflict-markers",
        (r"Failed to parse:? `uv\.lock`",),
        "uv.lock still holds git conflict markers (<<<<<<< ... >>>>>>>) from a merge or rebase",
        "never resolve uv.lock by hand: take the base branch's uv.lock and relock in the container",
        "uvdock lock resolve",
        requires=(r"^[ \t|0-9]*<<<<<<<|^[ \t|0-9]*>>>>>>>",),
    ),
    Signature(
        "lock-merge-conflict",
        (r"CONFLICT \([^)\n]{0,80}\): Merge conflict in uv\.lock", r"uv\.lock: needs merge"),
        "uv.lock conflicted in a merge or rebase",
        "take the base branch's uv.lock, relock in the container and stage it",
        "uvdock lock resolve",
    ),
    Signature(
        "group-is-an-extra",
        (
            r"Group `(?P<group>[^`\n]{1,200})` is not defined "
            r"in the project's `dependency-groups` table",
        ),
        "`{group}` is not a dependency group; in Megatron-LM `dev` and `lts` are extras "
        "([project.optional-dependencies]), so `--group {group}` fails",
        "pass `--extra {group}` instead of `--group {group}` (uvdock sync picks the right flag)",
        "uvdock sync --extra {group}",
    ),
    Signature(
        "protected-package-reinstalled",
        # uv: ` Downloading torch (846.2MiB)`, ` + torch==2.7.1`; pip: `Collecting torch==2.7.1`.
        (
            r"^[ \t]*(?:Downloading|Downloaded|Building|Collecting|[+~]) "
            rf"(?P<package>{_PROTECTED})(?=[ (=<>!~]|-\d|$)",
        ),
        "{package} is being downloaded / reinstalled over the base image's build "
        "(a sync without the Dockerfile's --no-install-package list)",
        "sync with every protected package excluded (uvdock sync does); "
        "never pip install {package}",
        "uvdock sync",
    ),
    Signature(
        "uv-not-found",
        (
            r"uv(?<![\w-]uv): (?:command )?not found",
            r"executable file [`\"']?uv[`\"']? not found",
            r"\"uv\": executable file not found",
        ),
        "uv is not in this container: it is not the CI image (wrong image)",
        "use the image built from docker/Dockerfile.ci.dev",
        "uvdock image build",
    ),
    Signature(
        "module-not-found",
        # `No module named 'a.b.c'`: the top-level package is what a distribution provides.
        (
            r"ModuleNotFoundError: No module named "
            r"'(?P<module>[^'.\n]{1,200})(?P<submodule>\.[^'\n]{0,300})?'",
        ),
        "`{module}` is not installed in the uv-managed venv (/opt/venv): a bare `pip install` "
        "puts it elsewhere and the next `uv sync` removes what uv.lock does not list",
        "declare the dependency with uv add (in the container) and sync; never bare pip "
        "install (the distribution name may differ from the module name)",
        "uvdock add {distribution}",
        if_no_distribution=Advice(
            "`{module}` is not installed where this ran, and no distribution on PyPI provides "
            "it to `uv add` (NVIDIA Apex is built from source; the NGC PyTorch base images "
            "ship it)",
            "run in the CI image built on the NGC base image, which provides it; elsewhere "
            "build it from source (github.com/NVIDIA/apex)",
            "uvdock run -- python -c 'import {module}'",
        ),
        if_declared=Advice(
            "`{module}` is declared by the project ({declared_in}: `{distribution}`) but not "
            "installed where this ran: the environment is behind uv.lock (or the process ran "
            "another interpreter than the uv-managed venv)",
            "sync the environment from uv.lock in the container; there is nothing to add",
            "{sync}",
        ),
    ),
    Signature(
        "no-space-left",
        (r"No space left on device",),
        "the disk filled up; uv's cache in the container (/root/.cache/uv) is the usual culprit",
        "mount a host cache dir (-v $HOME/.cache/uv:/root/.cache/uv; uvdock does this for "
        "you) and free space there (`uv cache prune`)",
        "uvdock sync",
    ),
    Signature(
        "build-secret-missing",
        (
            r"/run/secrets/(?P<secret>[A-Za-z0-9_]{1,200}): No such file or directory",
            r"secret (?P<secret>[A-Za-z0-9_]{1,200}):? not found",
        ),
        "the build reached the `jet` stage of Dockerfile.ci.dev, which needs the internal "
        "secret {secret}",
        "build with --target main to stop at the public stage (uvdock image build always does)",
        "uvdock image build",
    ),
    Signature(
        "registry-access-forbidden",
        (r"access(?<!\waccess) forbidden\b",),
        "the registry address has an explicit port (e.g. :5005), or you are not logged in",
        "use the registry host without a port (and `docker login HOST`)",
        "uvdock image pull",
    ),
    Signature(
        "registry-name-resolution",
        # An image pull (podman, the docker CLI, dockerd): `Get "https://HOST/v2/": dial tcp:
        # lookup HOST on 10.0.0.53:53: no such host`. uv's --offline does not help a pull.
        (r'/v2/"?:? dial tcp: lookup [^\s:]{1,300}(?: on \S{1,300})?: no such host',),
        "the image registry's host name does not resolve from here: name resolution failed "
        "(DNS, VPN or proxy), not a login problem",
        "check the registry host of the image (for uvdock image pull: the `gitlab` remote); "
        "connect the VPN, or give the engine its proxy (podman: HTTPS_PROXY in its "
        "environment; dockerd: its systemd proxy settings)",
        "uvdock image pull",
    ),
    Signature(
        "network-name-resolution",
        # curl/git: `Could not resolve host: github.com`; uv: `dns error: failed to lookup
        # address information: ...`; pip: `Failed to resolve 'pypi.org'`; Go clients (docker,
        # podman): `dial tcp: lookup nvcr.io on 127.0.0.53:53: no such host`.
        (
            r"Could not resolve (?:host|proxy)\b",
            r"\bdns error\b",
            r"[Tt]emporary failure in name resolution",
            r"Name or service not known",
            r"nodename nor servname provided",
            r"\blookup [^\s:]{1,300}(?: on \S{1,300})?: no such host",
            r"Failed to resolve '[^'\n]{1,300}'",
            r"getaddrinfo failed",
        ),
        _NETWORK_CAUSE.format(
            what="a host name could not be resolved (no DNS, or a network that only reaches "
            "the internet through a proxy)"
        ),
        _NETWORK_FIX,
        _NETWORK_COMMAND,
        unless=r'/v2/"?:? dial tcp: lookup',  # an image pull: registry-name-resolution
    ),
    Signature(
        "network-connect",
        # uv: `tcp connect error: Connection refused (os error 111)`, `operation timed out`,
        # `network timeout. Try increasing UV_HTTP_TIMEOUT`; curl: `Failed to connect to H port
        # 443`, `Connection timed out`; Go: `dial tcp 1.2.3.4:443: i/o timeout`. A refused unix
        # socket is a daemon that is not running, not the network.
        (
            r"\b[Cc]onnection refused",
            r"\b(?:[Cc]onnection|[Oo]peration|[Rr]ead|[Cc]onnect) timed out",
            r"\bi/o timeout\b",
            r"\bnetwork timeout\b",
            r"[Nn]etwork is unreachable",
            r"Failed to connect to \S{1,300} port \d",
        ),
        _NETWORK_CAUSE.format(what="a connection was refused or timed out"),
        _NETWORK_FIX + "; for slow links raise UV_HTTP_TIMEOUT",
        _NETWORK_COMMAND,
        requires=(_FETCHING,),
        unless=r"\bunix\b",
    ),
    Signature(
        "tls-interception",
        # uv (rustls): `invalid peer certificate: UnknownIssuer`; pip/Python: `[SSL:
        # CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate in
        # certificate chain`; curl/git: `SSL certificate problem: unable to get local issuer
        # certificate`, Debian's git (GnuTLS): `server certificate verification failed`; Go
        # (docker, podman): `x509: certificate signed by unknown authority`.
        (
            r"invalid peer certificate: UnknownIssuer",
            r"[Cc]ertificate verify failed",
            r"CERTIFICATE_VERIFY_FAILED",
            r"self[- ]signed certificate\b",
            r"unable to get local issuer certificate",
            r"server certificate verification failed",
            r"x509: certificate signed by unknown authority",
        ),
        "TLS interception: something on this network (a corporate proxy or firewall) re-signs "
        "HTTPS with its own certificate authority, which uv in the container does not trust; "
        "it is not a network outage",
        "give uv that CA inside the container: mount the CA file and point SSL_CERT_FILE at "
        "it, through engine-args in your own environment or user config (UVDOCK_ENGINE_ARGS, "
        "as below); or, when the image's system store already holds the CA, pass "
        "--env UV_SYSTEM_CERTS=1 the same way (UV_NATIVE_TLS=1 for uv before 0.9). For an "
        "image pull the engine on the host needs the CA "
        "(/etc/containers/certs.d/HOST/ca.crt, /etc/docker/certs.d/HOST/ca.crt)",
        "UVDOCK_ENGINE_ARGS='-v /path/to/corp-ca.pem:/etc/ssl/certs/corp.pem:ro "
        "--env SSL_CERT_FILE=/etc/ssl/certs/corp.pem' uvdock run -- uv sync --locked",
    ),
    Signature(
        "copy-pr-bot-deploy",
        (
            r"had a problem deploying to[ \t]+test\b",
            # from the line start, atomic: repeated `copy-pr-bot` is one try, not one per copy
            r"^(?>.*?copy-pr-bot).*had a problem deploying",
        ),
        "copy-pr-bot failed to deploy the PR to the test environment (a transient CI failure)",
        "push another commit to trigger it again (an empty one is fine)",
        "git commit --allow-empty -m 'ci: retrigger' && git push",
    ),
    Signature(
        "heredoc-unsupported",
        # buildah (podman < 5): `Unknown instruction: "APT-GET"`; Docker's legacy builder:
        # `unknown instruction: APT-GET`. Each line of a `RUN <<EOF` body read as an instruction.
        (r"[Uu]nknown instruction:? \"?(?P<word>[A-Za-z][\w-]*)",),
        "the image builder cannot parse the Dockerfile's heredocs (`RUN <<EOF`): it read the "
        "body line `{word}` as an instruction (podman < 5 / buildah < 1.35, or docker "
        "without BuildKit)",
        "build with podman 5 or later (buildah >= 1.35), or with docker and BuildKit (the "
        "buildx plugin, DOCKER_BUILDKIT not 0); `uvdock image build` checks this before "
        "building",
        "uvdock --engine docker image build",
    ),
)
