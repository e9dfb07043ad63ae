"""logscan.diagnose over a corpus of failure logs written as the tools print them."""

from __future__ import annotations

from pathlib import Path

import pytest

from uvdock.doctor import logscan
from uvdock.doctor import signatures as doctor
from uvdock.project import declared

CORPUS = Path(__file__).parents[1] / "data" / "doctor"
NETWORK_COMMAND = "uvdock run -- uv sync --locked --offline"
TLS_COMMAND = (
    "UVDOCK_ENGINE_ARGS='-v /path/to/corp-ca.pem:/etc/ssl/certs/corp.pem:ro "
    "--env SSL_CERT_FILE=/etc/ssl/certs/corp.pem' uvdock run -- uv sync --locked"
)

# log file -> (signature, the uvdock command that fixes it, a word the cause must name)
EXPECTED = {
    "stale-lock.log": ("stale-lock", "uvdock lock", "pyproject.toml"),
    "lock-check.log": ("stale-lock", "uvdock lock", "pyproject.toml"),
    "module-not-found.log": ("module-not-found", "uvdock add sentencepiece", "pip install"),
    "uv-not-found.log": ("uv-not-found", "uvdock image build", "wrong image"),
    "uv-not-found-exec.log": ("uv-not-found", "uvdock image build", "wrong image"),
    "no-space.log": ("no-space-left", "uvdock sync", "cache"),
    "build-secret.log": ("build-secret-missing", "uvdock image build", "JET_INDEX_URLS"),
    "build-secret-podman.log": ("build-secret-missing", "uvdock image build", "JET_INDEX_URLS"),
    "access-forbidden.log": ("registry-access-forbidden", "uvdock image pull", "port"),
    "access-forbidden-podman.log": ("registry-access-forbidden", "uvdock image pull", "port"),
    "lock-conflict-markers.log": (
        "lock-conflict-markers",
        "uvdock lock resolve",
        "conflict markers",
    ),
    "lock-conflict-markers-old-uv.log": (
        "lock-conflict-markers",
        "uvdock lock resolve",
        "conflict markers",
    ),
    "group-not-defined.log": ("group-is-an-extra", "uvdock sync --extra dev", "extras"),
    "torch-reinstalled.log": ("protected-package-reinstalled", "uvdock sync", "base image"),
    "network-dns-uv.log": ("network-name-resolution", NETWORK_COMMAND, "resolved"),
    "network-dns-git.log": ("network-name-resolution", NETWORK_COMMAND, "resolved"),
    "network-curl.log": ("network-name-resolution", NETWORK_COMMAND, "proxy"),
    "network-refused.log": ("network-connect", NETWORK_COMMAND, "refused"),
    "network-timeout.log": ("network-connect", NETWORK_COMMAND, "timed out"),
    "network-registry.log": ("network-connect", NETWORK_COMMAND, "timed out"),
    "module-not-found-einops.log": ("module-not-found", "uvdock add einops", "pip install"),
    # An image pull whose registry host does not resolve: not a uv download, so not uv's
    # --offline; captured with podman pull and the docker CLI on podman's socket.
    "network-dns-pull-podman.log": ("registry-name-resolution", "uvdock image pull", "registry"),
    "network-dns-pull-docker-on-podman.log": (
        "registry-name-resolution",
        "uvdock image pull",
        "registry",
    ),
    "tls-unknown-issuer-uv.log": ("tls-interception", TLS_COMMAND, "certificate authority"),
    "tls-self-signed-curl.log": ("tls-interception", TLS_COMMAND, "certificate authority"),
    "tls-local-issuer-curl.log": ("tls-interception", TLS_COMMAND, "certificate authority"),
    "tls-local-issuer-git.log": ("tls-interception", TLS_COMMAND, "certificate authority"),
    "tls-verify-failed-python.log": ("tls-interception", TLS_COMMAND, "certificate authority"),
    "tls-unknown-authority-podman.log": ("tls-interception", TLS_COMMAND, "certificate authority"),
    "copy-pr-bot.log": (
        "copy-pr-bot-deploy",
        "git commit --allow-empty -m 'ci: retrigger' && git push",
        "test",
    ),
    # Real output of podman 4.3.1 (buildah 1.28.2) and of the docker CLI on its socket.
    "heredoc-unsupported-podman.log": (
        "heredoc-unsupported",
        "uvdock --engine docker image build",
        "APT-GET",
    ),
    "heredoc-unsupported-docker-on-podman.log": (
        "heredoc-unsupported",
        "uvdock --engine docker image build",
        "heredocs",
    ),
}


def test_every_corpus_file_is_covered() -> None:
    assert sorted(p.name for p in CORPUS.glob("*.log")) == sorted([*EXPECTED, "unknown.log"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_log_names_cause_fix_and_command(name: str) -> None:
    signature, command, cause_word = EXPECTED[name]
    findings = logscan.diagnose((CORPUS / name).read_text()).findings
    assert [f.signature for f in findings] == [signature]
    finding = findings[0]
    assert finding.command == command
    assert cause_word in finding.cause
    assert finding.fix
    assert "<" not in finding.command  # every template field was filled


def test_the_finding_quotes_the_matching_line() -> None:
    finding = logscan.diagnose((CORPUS / "stale-lock.log").read_text()).findings[0]
    assert finding.line_number == 4
    assert finding.line.startswith("error: The lockfile at `uv.lock` needs to be updated")


def test_torch_lines_without_downloads() -> None:
    log = "Installed 1 package in 2.1s\n - torch==2.8.0a0+5228986c39.nv25.5\n + torch==2.7.1\n"
    finding = logscan.diagnose(log).findings[0]
    assert (finding.signature, finding.line_number) == ("protected-package-reinstalled", 3)
    assert "torch" in finding.cause


def test_other_packages_are_not_protected() -> None:
    assert logscan.diagnose(" Downloading torchmetrics (900KiB)\n + torchao==0.1\n").findings == []


def test_parse_error_without_conflict_markers_is_not_a_merge_conflict() -> None:
    log = "error: Failed to parse `uv.lock`\n  cause: TOML parse error at line 3\ninvalid key\n"
    diagnosis = logscan.diagnose(log)
    assert diagnosis.findings == []
    assert diagnosis.error_lines == [(1, "error: Failed to parse `uv.lock`")]


def test_unknown_log_shows_the_error_looking_lines() -> None:
    diagnosis = logscan.diagnose((CORPUS / "unknown.log").read_text())
    assert diagnosis.findings == []
    assert [n for n, _ in diagnosis.error_lines] == [9, 12, 14, 15]
    assert diagnosis.error_lines[-1][1].startswith("fatal: not a git repository")


def test_error_lines_are_capped() -> None:
    diagnosis = logscan.diagnose("error: x\n" * 500)
    assert len(diagnosis.error_lines) == logscan.MAX_ERROR_LINES


def test_ci_decorations_are_removed() -> None:
    log = (
        "2025-06-01T10:00:00.1234567Z \x1b[31merror\x1b[0m: Group `lts` is not defined in the "
        "project's `dependency-groups` table\r\n"
        "2025-06-01T10:00:01.0000000Z  + torch==2.7.1\r\n"
    )
    findings = logscan.diagnose(log).findings
    assert [(f.signature, f.line_number) for f in findings] == [
        ("group-is-an-extra", 1),
        ("protected-package-reinstalled", 2),
    ]
    assert findings[0].command == "uvdock sync --extra lts"


def test_several_signatures_in_log_order_once_each() -> None:
    log = "\n".join(
        [
            "bash: uv: command not found",
            "error: Group `dev` is not defined in the project's `dependency-groups` table",
            "bash: uv: command not found",
        ]
    )
    assert [f.signature for f in logscan.diagnose(log).findings] == [
        "uv-not-found",
        "group-is-an-extra",
    ]


def test_signatures_are_data() -> None:
    names = [s.name for s in doctor.SIGNATURES]
    assert len(names) == len(set(names))
    for signature in doctor.SIGNATURES:
        assert signature.patterns and signature.cause and signature.fix and signature.command


def test_a_custom_table() -> None:
    table = (
        doctor.Signature(
            "x", (r"boom (?P<what>\w+)",), "it went {what}", "fix {what}", "uvdock {what}"
        ),
    )
    finding = logscan.diagnose("ok\nboom bang\n", table).findings[0]
    assert (finding.cause, finding.fix, finding.command) == (
        "it went bang",
        "fix bang",
        "uvdock bang",
    )


def test_carriage_return_redraws_keep_line_numbers() -> None:
    log = "Resolved 3 packages\n 10%\r 50%\r Downloading torch (846.2MiB)\nerror: x\n"
    finding = logscan.diagnose(log).findings[0]
    assert (finding.line_number, finding.line) == (2, "Downloading torch (846.2MiB)")


def test_patterns_never_match_across_lines() -> None:
    # `+` on one line and the package on the next is not a reinstall line.
    assert logscan.diagnose(" +\n torch==2.7.1\nGroup `a\nb` is not defined\n").findings == []


@pytest.mark.parametrize(
    ("line", "package"),
    [
        ("Collecting torch==2.7.1", "torch"),
        ("  Downloading torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl (821.0 MB)", "torch"),
        (" ~ triton==3.3.1", "triton"),
        (" Downloading torchvision (7.1MiB)", "torchvision"),
    ],
)
def test_protected_package_forms(line: str, package: str) -> None:
    finding = logscan.diagnose(line + "\n").findings[0]
    assert finding.signature == "protected-package-reinstalled"
    assert f"{package} is being downloaded" in finding.cause


def test_git_conflict_in_uv_lock() -> None:
    log = "Auto-merging uv.lock\nCONFLICT (content): Merge conflict in uv.lock\n"
    assert [f.command for f in logscan.diagnose(log).findings] == ["uvdock lock resolve"]


def test_network_fix_names_proxy_index_and_offline() -> None:
    (finding,) = logscan.diagnose((CORPUS / "network-dns-uv.log").read_text()).findings
    for word in ("HTTPS_PROXY", "UV_DEFAULT_INDEX", "--offline"):
        assert word in finding.fix
    assert finding.line.startswith("Caused by: dns error")


@pytest.mark.parametrize(
    "log",
    [
        # a daemon that is not running: a unix socket, not the network
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.\n"
        "dial unix /var/run/docker.sock: connect: connection refused\n",
        # a refused or timed-out connection with no download in sight
        "FAILED tests/test_server.py::test_restart - ConnectionRefusedError: Connection refused\n",
        "pytest: test_allreduce: operation timed out after 600 s\n",
        # ordinary words
        "The host name resolution order is documented in nsswitch.conf\n",
    ],
)
def test_not_network_failures(log: str) -> None:
    names = [f.signature for f in logscan.diagnose(log).findings]
    assert not [n for n in names if n.startswith("network-")]


# -- advice that fits the project --------------------------------------------------------------

MEGATRON_PYPROJECT = Path(__file__).parents[2] / "examples" / "megatron-lm" / "pyproject.toml"


def _megatron_declarations() -> dict[str, declared.Declared]:
    import tomllib

    if not MEGATRON_PYPROJECT.is_file():
        pytest.skip("../shared/megatron-lm is absent (a user's clone has none)")
    return declared.declarations(tomllib.loads(MEGATRON_PYPROJECT.read_text()))


@pytest.mark.parametrize(
    ("module", "command", "where"),
    [
        ("einops", "uvdock sync --extra dev", "the `dev` extra"),  # the case
        ("numpy", "uvdock sync", "[project] dependencies"),
        ("pytest", "uvdock sync --group test", "the `test` dependency group"),
        ("flash_mla", "uvdock sync --group no_pypi_wheels", "the `no_pypi_wheels` dependency"),
        ("gitlab", "uvdock sync --group ci", "`python-gitlab`"),  # import name != distribution
        ("modelopt", "uvdock sync --extra dev", "`nvidia-modelopt"),
    ],
)
def test_a_declared_module_needs_a_sync_not_an_add(module: str, command: str, where: str) -> None:
    log = (CORPUS / "module-not-found-einops.log").read_text().replace("einops", module)
    (finding,) = logscan.diagnose(log, declared=_megatron_declarations()).findings
    assert finding.signature == "module-not-found"
    assert finding.command == command
    assert where in finding.cause and "declared by the project" in finding.cause
    assert "uv add" not in finding.fix


def test_an_undeclared_module_still_says_add() -> None:
    log = (CORPUS / "module-not-found-einops.log").read_text().replace("einops", "leftpad")
    (finding,) = logscan.diagnose(log, declared=_megatron_declarations()).findings
    assert finding.command == "uvdock add leftpad"


@pytest.mark.parametrize(
    ("module", "declared_as"),
    [
        ("yaml", "PyYAML"),
        ("PIL", "pillow"),
        ("flash_attn", "Flash.Attn"),
        ("cv2", "opencv-python-headless"),
    ],
)
def test_import_names_match_distribution_names(module: str, declared_as: str) -> None:
    found = declared.declarations(
        {"project": {"dependencies": [f"{declared_as}>=1; python_version>'3'"]}}
    )
    hit = declared.for_module(found, module)
    assert hit is not None and hit.distribution == declared_as


def test_declarations_skip_what_is_not_a_requirement() -> None:
    data = {
        "project": {"optional-dependencies": {"lts": ["torch"]}, "dependencies": "oops"},
        "dependency-groups": {"dev": [{"include-group": "test"}, "ruff"], "test": ["pytest"]},
    }
    found = declared.declarations(data)
    assert sorted(found) == ["pytest", "ruff", "torch"]
    assert found["torch"].sync == "uvdock sync --profile lts --lts"  # LTS only with --lts


def test_name_resolution_is_not_tls_or_access() -> None:
    names = {
        f.signature
        for f in logscan.diagnose((CORPUS / "network-dns-pull-podman.log").read_text()).findings
    }
    assert names == {"registry-name-resolution"}


@pytest.mark.parametrize(
    ("line", "word"),
    [
        ("ModuleNotFoundError: No module named '$(touch pwned)'", "$(touch pwned)"),
        ("ModuleNotFoundError: No module named 'a;rm -rf ~'", "a;rm -rf ~"),
        ("error: Group `$(id)` is not defined in the project's `dependency-groups` table", "$(id)"),
    ],
)
def test_the_command_to_run_quotes_what_the_log_chose(line: str, word: str) -> None:
    """A log is untrusted text: the `run:` line is one to paste into a shell, so a word taken
    from the log is one quoted argument there, never shell syntax."""
    import shlex

    (finding,) = logscan.diagnose(line + "\n").findings
    argv = shlex.split(finding.command)
    assert argv[:2] == ["uvdock", argv[1]] and argv[-1] == word
    assert shlex.join(argv) == finding.command


def test_the_sync_command_quotes_an_extra_or_group_the_pyproject_chose() -> None:
    """pyproject.toml is repository text: an extra or group name is one quoted word in `run:`."""
    import shlex
    import tomllib

    data = tomllib.loads(
        '[project]\nname = "p"\n[project.optional-dependencies]\n"$(touch pwned)" = ["einops"]\n'
        '[dependency-groups]\n"a;id" = ["pyyaml"]\n'
    )
    found = declared.declarations(data)
    assert shlex.split(found["einops"].sync) == ["uvdock", "sync", "--extra", "$(touch pwned)"]
    assert shlex.split(found["pyyaml"].sync) == ["uvdock", "sync", "--group", "a;id"]


@pytest.mark.parametrize(
    ("module", "distribution"),
    [
        ("yaml", "PyYAML"),
        ("cv2", "opencv-python"),
        ("sklearn", "scikit-learn"),
        ("PIL", "pillow"),
        ("skimage", "scikit-image"),
        ("bs4", "beautifulsoup4"),
        ("dateutil", "python-dateutil"),
        ("google.protobuf", "protobuf"),
        ("attr", "attrs"),
        ("jwt", "PyJWT"),
        ("Crypto", "pycryptodome"),
        ("OpenSSL", "pyOpenSSL"),
        ("serial", "pyserial"),
        ("dotenv", "python-dotenv"),
        ("git", "GitPython"),
        ("magic", "python-magic"),
        ("zmq", "pyzmq"),
        ("fitz", "PyMuPDF"),
        ("docx", "python-docx"),
        ("mpi4py", "mpi4py"),
        ("transformer_engine", "transformer-engine"),
        ("yaml.constructor", "PyYAML"),  # a submodule: its top-level package's distribution
    ],
)
def test_an_undeclared_import_name_is_added_by_its_distribution(
    module: str, distribution: str
) -> None:
    (finding,) = logscan.diagnose(f"ModuleNotFoundError: No module named '{module}'\n").findings
    assert finding.command == f"uvdock add {distribution}"


def test_a_google_namespace_module_is_not_protobuf() -> None:
    line = "ModuleNotFoundError: No module named 'google.cloud'\n"
    (finding,) = logscan.diagnose(line).findings
    assert finding.command != "uvdock add protobuf"


def test_apex_has_no_distribution_to_add_and_says_so() -> None:
    (finding,) = logscan.diagnose("ModuleNotFoundError: No module named 'apex'\n").findings
    assert "uvdock add" not in finding.command
    assert "no distribution" in finding.cause and "PyPI" in finding.cause
