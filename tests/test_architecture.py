"""The shape of src/uvdock, read from the source with `ast`: the one place that states the rules
(ARCHITECTURE.md lists them by test name).

Data flows one way: cli -> commands -> domain packages -> shared leaves. Domain code (image/,
lts/, recipes/, lock/, project/, registry/, doctor/signatures.py) never prints, never starts a
process and never imports run/ or output; only commands/, doctor/checks.py, context.py and run/
itself import run/. Only registry/ opens network connections. Only the file layer (edit.py,
state_store.py, repolock.py), run/ and the root handler's crash log write files. Only cli/main.py
ends the process with an exit code; outside cli/, only the entry point imports cli/main.py and
only completion imports cli/parse.py.
Imports inside functions and TYPE_CHECKING blocks count: they are dependencies all the same.
`importlib.import_module(f"uvdock.commands.{...}")` counts as an import of every module the
f-string's constant prefix names.

Each checker takes {module name: source text}, so the self-tests at the bottom prove every rule
fires on a small synthetic tree.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from uvdock.cli import spec as cli_spec

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "uvdock"

# registry/ is domain code too (it returns data and raises; it neither prints nor spawns), and
# the one package allowed to open network connections.
DOMAIN_PACKAGES = ("image", "lts", "recipes", "lock", "merge", "project", "registry", "formats")
DOMAIN_MODULES = ("doctor.signatures", "doctor.logscan", "doctor.logread")
# Modules that may import uvdock.run (besides run/ itself).
RUN_IMPORTERS_PACKAGES = ("commands", "run")
# The root handler and the file layer hold off Ctrl-C (run/signals.py) where an operation must
# not be cut in half.
RUN_IMPORTERS_MODULES = (
    "doctor.checks",
    "context",
    "cli.main",
    "files.edit",
    "files.state_store",
    "__main__",
)
# `python -m uvdock` (and the console script, `uvdock.__main__:entry`) is the one place that
# may import the CLI's root handler and hand its exit code to the OS.
ENTRY_POINTS = ("uvdock.__main__",)
# Who outside cli/ may import cli/'s inner modules (cli/spec.py, a leaf of data, is free to all).
CLI_INNER_IMPORTERS: dict[str, tuple[str, ...]] = {
    "cli.main": ("__main__",),
    # The completion scripts are generated from the very parsers the CLI parses with, so the
    # options TAB offers can never drift from the options uvdock accepts.
    "cli.parse": ("commands.completion",),
}
# The only modules that may end the process with an exit code (sys.exit, SystemExit, os._exit).
EXITERS = ("cli.main", "__main__")

NETWORK_MODULES = (
    "socket",
    "ssl",
    "http.client",
    "http.server",
    "urllib.request",
    "socketserver",
    "ftplib",
    "smtplib",
    "xmlrpc",
    "urllib3",
    "requests",
    "httpx",
    "aiohttp",
)
NETWORK_PACKAGES = ("registry",)
# One reader per format: YAML is read through formats/yaml.py, nowhere else.
YAML_PACKAGES = ("formats",)

# Who may write files (open for writing, Path.write_*, os.replace, mkdir, shutil.rmtree...).
FILE_WRITER_PACKAGES = (
    "run",  # the CI container and its cache (run/ci_container.py): files a run needs, by the repo
)
FILE_WRITER_MODULES = (
    "files.edit",  # every edit of a repository file: atomic, confined to the repository
    "files.state_store",  # `lock resolve`'s saved state in the git dir (the model is lock/)
    "files.repolock",  # the repository lock file: one writer at a time
    "cli.main",  # the crash log of an internal error (exit 4), in the temp folder
)
# edit.py's functions that write; domain code may use its plan types (FileEdit) only.
EDIT_WRITERS = ("apply", "atomic_write", "atomic_write_bytes", "ensure_folder")
WRITE_OS = (
    "replace",
    "rename",
    "renames",
    "remove",
    "unlink",
    "rmdir",
    "removedirs",
    "mkdir",
    "makedirs",
    "symlink",
    "link",
    "chmod",
    "lchmod",
    "chown",
    "lchown",
    "truncate",
    "ftruncate",
    "write",
    "utime",
    "mkfifo",
    "mknod",
    "fchmod",
    "fchown",
    "open",
    "fdopen",
)
WRITE_SHUTIL = (
    "copy",
    "copy2",
    "copyfile",
    "copytree",
    "copymode",
    "copystat",
    "move",
    "rmtree",
    "chown",
    "make_archive",
    "unpack_archive",
)
WRITE_TEMPFILE = (
    "mkstemp",
    "mkdtemp",
    "NamedTemporaryFile",
    "TemporaryFile",
    "SpooledTemporaryFile",
    "TemporaryDirectory",
)
WRITE_MODULE_FUNCTIONS = {"os": WRITE_OS, "shutil": WRITE_SHUTIL, "tempfile": WRITE_TEMPFILE}
# Path's writing methods: called on anything but a module, they are taken as Path's.
WRITE_METHODS = (
    "write_text",
    "write_bytes",
    "unlink",
    "mkdir",
    "rmdir",
    "touch",
    "symlink_to",
    "hardlink_to",
    "rename",
    "chmod",
    "lchmod",
)

PROCESS_MODULES = ("subprocess", "multiprocessing", "pty")
PROCESS_OS_PREFIXES = ("system", "exec", "fork", "spawn", "popen", "posix_spawn")

# Modules are split by concept; about 400 lines is a guide, never a reason to cut one concept in
# two. Past this ceiling a module holds more than one concept.
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60
MAX_COMPLEXITY = 15

Sources = Mapping[str, str]


@functools.cache
def _parse(source: str) -> ast.Module:
    """Each source parsed once per run: every rule walks the whole tree (read-only)."""
    return ast.parse(source)


# -- reading the tree ----------------------------------------------------------------------


def read_sources(root: Path = SRC) -> dict[str, str]:
    """{dotted module name: source} for every .py file under root/uvdock."""
    sources = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        sources[".".join(parts)] = path.read_text(encoding="utf-8")
    return sources


def _is_package(name: str, sources: Sources) -> bool:
    return any(other.startswith(name + ".") for other in sources)


def _absolute(module: str, node: ast.ImportFrom, sources: Sources) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module, sources):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(module: str, sources: Sources) -> set[str]:
    """Every dotted name `module` imports, stdlib and third party included."""
    names: set[str] = set()
    for node in ast.walk(_parse(sources[module])):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node, sources)
            names.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and _is_import_module(node):
            names.update(_import_module_targets(node, sources))
    return names


def _is_import_module(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("import_module", "__import__") and bool(call.args)


def _import_module_targets(call: ast.Call, sources: Sources) -> set[str]:
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return {arg.value}
    prefix = ""
    if isinstance(arg, ast.JoinedStr) and arg.values:
        first = arg.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            prefix = first.value
    # A computed name: it may be any module its constant prefix allows.
    return {name for name in sources if name.startswith(prefix)} if prefix else set(sources)


def internal_imports(module: str, sources: Sources) -> set[str]:
    """The uvdock modules `module` imports (`from pkg import mod` counts as importing pkg.mod)."""
    found = set()
    for name in imported_names(module, sources):
        while name and name not in sources:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def import_graph(sources: Sources) -> dict[str, set[str]]:
    return {module: internal_imports(module, sources) for module in sources}


def _in(module: str, packages: tuple[str, ...], modules: tuple[str, ...] = ()) -> bool:
    inside = module.removeprefix(PACKAGE + ".")
    return inside in modules or any(
        inside == pkg or inside.startswith(pkg + ".") for pkg in packages
    )


def _imports_from(targets: set[str], package: str) -> list[str]:
    full = f"{PACKAGE}.{package}"
    return sorted(t for t in targets if t == full or t.startswith(full + "."))


# -- rules ---------------------------------------------------------------------------------


def import_cycles(sources: Sources) -> list[list[str]]:
    """One cycle path (first module repeated at the end) per strongly connected component."""
    graph = import_graph(sources)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_path(graph, component) for component in components]


def _cycle_path(graph: Mapping[str, set[str]], component: set[str]) -> list[str]:
    start = min(component)
    # Breadth-first from start back to start, staying inside the component: a shortest cycle.
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & component):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start]
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no cycle in component {sorted(component)}")


def cli_importers(sources: Sources) -> list[str]:
    """Modules outside cli/ importing cli/main.py or cli/parse.py without leave."""
    problems = []
    for module, targets in import_graph(sources).items():
        if _in(module, ("cli",)):
            continue
        for inner, allowed in CLI_INNER_IMPORTERS.items():
            if f"{PACKAGE}.{inner}" in targets and not _in(module, (), allowed):
                problems.append(f"{module} imports {PACKAGE}.{inner}")
    return problems


def exit_violations(sources: Sources) -> list[str]:
    """sys.exit(), raise SystemExit, os._exit() or exit()/quit() outside the root handler."""
    found = []
    for module, source in sources.items():
        if _in(module, (), EXITERS):
            continue
        for node in ast.walk(_parse(source)):
            name = _exit_call(node)
            if name:
                found.append(f"{module}:{getattr(node, 'lineno', 0)} {name}")
    return found


def signal_violations(sources: Sources) -> list[str]:
    """Modules outside run/ importing `signal`: a Ctrl-C or a kill is handled in run/ only."""
    return sorted(
        f"{module} imports {name}"
        for module in sources
        if not _in(module, ("run",))
        for name in imported_names(module, sources)
        if name == "signal" or name.startswith("signal.")
    )


def _exit_call(node: ast.AST) -> str:
    if isinstance(node, ast.Name) and node.id == "SystemExit":
        return "uses SystemExit"
    if isinstance(node, ast.ImportFrom) and node.module in ("sys", "os"):
        names = [a.name for a in node.names if a.name in ("exit", "_exit")]
        return f"imports {node.module}.{names[0]}" if names else ""
    if not isinstance(node, ast.Call):
        return ""
    func = node.func
    if isinstance(func, ast.Name) and func.id in ("exit", "quit"):
        return f"calls {func.id}()"
    if isinstance(func, ast.Attribute) and (getattr(func.value, "id", None), func.attr) in (
        ("sys", "exit"),
        ("os", "_exit"),
    ):
        return f"calls {ast.unparse(func)}()"
    return ""


def network_violations(sources: Sources) -> list[str]:
    """Modules outside registry/ importing a way to open a network connection."""
    return sorted(
        f"{module} imports {name}"
        for module in sources
        if not _in(module, NETWORK_PACKAGES)
        for name in imported_names(module, sources)
        if any(name == m or name.startswith(m + ".") for m in NETWORK_MODULES)
    )


def yaml_violations(sources: Sources) -> list[str]:
    """Modules outside formats/ importing PyYAML."""
    return sorted(
        f"{module} imports {name}"
        for module in sources
        if not _in(module, YAML_PACKAGES)
        for name in imported_names(module, sources)
        if name == "yaml" or name.startswith("yaml.")
    )


def layer_violations(sources: Sources) -> list[str]:
    """Domain modules importing run/ or output; run/ imported from outside its allowed users."""
    problems = []
    for module, targets in import_graph(sources).items():
        if _in(module, DOMAIN_PACKAGES, DOMAIN_MODULES):
            for banned in ("run", "ui.output"):
                problems += [f"{module} imports {t}" for t in _imports_from(targets, banned)]
        elif not _in(module, RUN_IMPORTERS_PACKAGES, RUN_IMPORTERS_MODULES):
            problems += [f"{module} imports {t}" for t in _imports_from(targets, "run")]
    return problems


def side_effects(module: str, source: str) -> list[str]:
    """print() calls, writes to sys.stdout/sys.stderr and ways of starting a process."""
    found = []
    for node in ast.walk(_parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            found.append(f"{module}:{line} calls print()")
        elif isinstance(node, ast.Attribute) and _is_std_stream(node):
            found.append(f"{module}:{line} uses sys.{node.attr}")
        elif isinstance(node, ast.Attribute) and _is_os_process(node):
            found.append(f"{module}:{line} uses os.{node.attr}")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found += [f"{module}:{line} imports {name}" for name in _process_imports(node)]
    return found


def _is_std_stream(node: ast.Attribute) -> bool:
    return node.attr in ("stdout", "stderr") and getattr(node.value, "id", None) == "sys"


def _is_os_process(node: ast.Attribute) -> bool:
    return getattr(node.value, "id", None) == "os" and node.attr.startswith(PROCESS_OS_PREFIXES)


def _process_imports(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif node.module == "os":
        names = [f"os.{a.name}" for a in node.names if a.name.startswith(PROCESS_OS_PREFIXES)]
    elif node.module == "sys":
        names = [f"sys.{a.name}" for a in node.names if a.name in ("stdout", "stderr")]
    else:
        names = [node.module or ""]
    return [n for n in names if n.split(".")[0] in PROCESS_MODULES or n.startswith(("os.", "sys."))]


def domain_side_effects(sources: Sources) -> list[str]:
    return [
        problem
        for module, source in sources.items()
        if _in(module, DOMAIN_PACKAGES, DOMAIN_MODULES)
        for problem in side_effects(module, source)
    ]


def file_writes(module: str, source: str) -> list[str]:
    """Every way `source` writes, creates or removes a file or folder, as far as `ast` sees."""
    found = []
    for node in ast.walk(_parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call):
            found += [f"{module}:{line} {what}" for what in _write_call(node)]
        elif isinstance(node, ast.ImportFrom) and node.module in WRITE_MODULE_FUNCTIONS:
            writers = WRITE_MODULE_FUNCTIONS[node.module]
            found += [
                f"{module}:{line} imports {node.module}.{alias.name}"
                for alias in node.names
                if alias.name in writers
            ]
    return found


def _write_call(call: ast.Call) -> list[str]:
    func = call.func
    if isinstance(func, ast.Name):
        return ["opens a file for writing"] if func.id == "open" and _writes(call, 1) else []
    if not isinstance(func, ast.Attribute):
        return []
    owner = getattr(func.value, "id", None)
    if owner in WRITE_MODULE_FUNCTIONS:
        if func.attr in WRITE_MODULE_FUNCTIONS[owner]:
            return [f"calls {owner}.{func.attr}()"]
        return []
    if func.attr == "open" and _writes(call, 0, known_only=True):
        return ["opens a file for writing"]
    return [f"calls .{func.attr}()"] if func.attr in WRITE_METHODS else []


def _writes(call: ast.Call, position: int, *, known_only: bool = False) -> bool:
    """Whether an open() call's mode (positional at `position`, or `mode=`) can write.

    A mode computed at run time counts as writing, except for methods named `open`
    (`known_only`), which are Path.open only when their first argument is a mode string.
    """
    mode: ast.expr | None = next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None and len(call.args) > position:
        mode = call.args[position]
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(flag in mode.value for flag in "wax+")
    return not known_only


def write_violations(sources: Sources) -> list[str]:
    """Files written outside the file layer, and domain code importing a way to write."""
    problems = [
        problem
        for module, source in sources.items()
        if not _in(module, FILE_WRITER_PACKAGES, FILE_WRITER_MODULES)
        for problem in file_writes(module, source)
    ]
    # edit.py as a whole or its writing functions (its plan types are fine), the other writers
    # in any way.
    exact = {f"{PACKAGE}.files.edit"} | {f"{PACKAGE}.files.edit.{name}" for name in EDIT_WRITERS}
    whole = tuple(f"{PACKAGE}.{m}" for m in FILE_WRITER_MODULES if m != "files.edit")
    for module in sources:
        if _in(module, DOMAIN_PACKAGES, DOMAIN_MODULES):
            problems += sorted(
                f"{module} imports {name}"
                for name in imported_names(module, sources)
                if name in exact or any(name == w or name.startswith(w + ".") for w in whole)
            )
    return problems


def leaf_violations(sources: Sources, leaf: str = f"{PACKAGE}.cli.spec") -> list[str]:
    return sorted(
        name
        for name in imported_names(leaf, sources)
        if name == PACKAGE or name.startswith(PACKAGE + ".")
    )


# Who may read a file's bytes directly: the file layer's one reader (files/textlines.py: regular
# files only, a size limit per kind) and the readers of the user's own files, which a cloned
# repository does not choose.
FILE_READER_PACKAGES = ("files",)
FILE_READER_MODULES = (
    "config.trust",  # the user's trust record
    "registry.auth",  # the user's registry auth file
    "run.slurm",  # uvdock's own record beside the user's .sqsh
    "commands.doctor",  # `doctor LOG`: the log the user names, read as a bounded stream
)
READ_METHODS = ("read_text", "read_bytes")


def file_reads(module: str, source: str) -> list[str]:
    """Every direct read of a file (`open`, `Path.read_text/read_bytes/open`) in `source`."""
    found = []
    for node in ast.walk(_parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func, line = node.func, node.lineno
        if isinstance(func, ast.Name) and func.id == "open" and not _is_proc(node):
            found.append(f"{module}:{line} calls open()")
        elif isinstance(func, ast.Attribute) and _is_textlines(func.value):
            continue  # the one reader itself
        elif isinstance(func, ast.Attribute) and func.attr in READ_METHODS:
            found.append(f"{module}:{line} calls .{func.attr}()")
        elif isinstance(func, ast.Attribute) and func.attr == "open" and _path_open(func, node):
            found.append(f"{module}:{line} calls .open()")
    return found


def _is_proc(call: ast.Call) -> bool:
    """open("/proc/..."): the kernel's view of uvdock's own processes, not a repository file."""
    first = call.args[0] if call.args else None
    if isinstance(first, ast.JoinedStr) and first.values:
        first = first.values[0]
    return isinstance(first, ast.Constant) and str(first.value).startswith("/proc/")


def _path_open(func: ast.Attribute, call: ast.Call) -> bool:
    """A method named `open` is Path.open when it has no argument or a mode string first
    (os.open is the file layer's and the terminal's, judged by the write rule)."""
    if isinstance(func.value, ast.Name) and func.value.id == "os":
        return False
    first = call.args[0] if call.args else None
    return first is None or (isinstance(first, ast.Constant) and isinstance(first.value, str))


def _is_textlines(owner: ast.expr) -> bool:
    return isinstance(owner, ast.Name) and owner.id == "textlines"


def read_violations(sources: Sources) -> list[str]:
    return [
        problem
        for module, source in sources.items()
        if not _in(module, FILE_READER_PACKAGES, FILE_READER_MODULES)
        for problem in file_reads(module, source)
    ]


# The one place for each: processes start in run/proc.py (the process door), Dockerfile
# instructions are read by image/dockerfile.py, Markdown code spans are written by
# ui/markdown_text.py.
PROCESS_DOOR = "run.proc"
DOCKERFILE_READER = "image.dockerfile"
MARKDOWN_WRITER = "ui.markdown_text"
RE_FUNCTIONS = ("compile", "match", "fullmatch", "search", "findall", "finditer", "sub", "split")
# A regular expression naming a Dockerfile instruction as a word reads Dockerfiles.
DOCKERFILE_WORD = re.compile(r"(?<![A-Za-z])(?:FROM|ARG|ENV|ONBUILD)(?![A-Za-z])")


def process_door_violations(sources: Sources) -> list[str]:
    """Processes started (subprocess, pty, os.exec*/fork/spawn/system) outside run/proc.py."""
    return [
        problem
        for module, source in sources.items()
        if not _in(module, (), (PROCESS_DOOR,))
        for problem in side_effects(module, source)
        if "print()" not in problem and " sys." not in problem
    ]


def _patterns(source: str) -> Iterator[tuple[int, str]]:
    """The constant patterns handed to `re` functions: (line, pattern)."""
    for node in ast.walk(_parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if getattr(node.func.value, "id", None) != "re" or node.func.attr not in RE_FUNCTIONS:
            continue
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            yield node.lineno, first.value


def dockerfile_reader_violations(sources: Sources) -> list[str]:
    return [
        f"{module}:{line} reads Dockerfile instructions"
        for module, source in sources.items()
        if not _in(module, (), (DOCKERFILE_READER,))
        for line, pattern in _patterns(source)
        if DOCKERFILE_WORD.search(pattern)
    ]


def markdown_violations(sources: Sources) -> list[str]:
    """Backtick fences measured or built outside ui/markdown_text.py (a code span of its own)."""
    found = []
    for module, source in sources.items():
        if _in(module, (), (MARKDOWN_WRITER,)):
            continue
        found += [
            f"{module}:{line} measures backtick runs" for line, p in _patterns(source) if "`+" in p
        ]
        for node in ast.walk(_parse(source)):
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Mult)
                and any(
                    isinstance(n, ast.Constant) and n.value == "`" for n in (node.left, node.right)
                )
            ):
                found.append(f"{module}:{node.lineno} builds a backtick fence")
    return found


# A URL's userinfo is taken apart in ui/redact.py (url_credentials, the masks); registry/ reads
# a proxy's user and password only to send them to that proxy.
URL_CREDENTIAL_MODULES = ("ui.redact",)
URL_CREDENTIAL_PACKAGES = ("registry",)


def url_credential_violations(sources: Sources) -> list[str]:
    """`.username`/`.password` of a parsed URL, or a split at "@" after "://", elsewhere."""
    found = []
    for module, source in sources.items():
        if _in(module, URL_CREDENTIAL_PACKAGES, URL_CREDENTIAL_MODULES):
            continue
        for node in ast.walk(_parse(source)):
            if not isinstance(node, ast.Attribute) or node.attr not in ("username", "password"):
                continue
            if isinstance(node.ctx, ast.Load) and not _is_self(node.value):
                found.append(f"{module}:{node.lineno} reads a URL's .{node.attr}")
    return found


def _is_self(value: ast.expr) -> bool:
    return isinstance(value, ast.Name) and value.id == "self"


def upward_imports(sources: Sources) -> list[str]:
    """Modules outside commands/ and cli/ importing a command module: data flows down only."""
    return sorted(
        f"{module} imports {target}"
        for module, targets in import_graph(sources).items()
        if not _in(module, ("commands", "cli"))
        for target in _imports_from(targets, "commands")
    )


# -- size and complexity -------------------------------------------------------------------


def complexity(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """McCabe complexity counted as ruff's C901 counts it (statements only)."""
    return 1 + _branches(function.body)


def _branches(body: list[ast.stmt]) -> int:
    count = 0
    for stmt in body:
        count += _stmt_branches(stmt)
    return count


def _stmt_branches(stmt: ast.stmt) -> int:
    if isinstance(stmt, ast.If):
        return 1 + _branches(stmt.body) + _branches(stmt.orelse)
    if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
        return 1 + _branches(stmt.body) + _branches(stmt.orelse)
    if isinstance(stmt, ast.With | ast.AsyncWith | ast.ClassDef):
        return _branches(stmt.body)
    if isinstance(stmt, ast.Try | ast.TryStar):
        handlers = sum(1 + _branches(h.body) for h in stmt.handlers)
        orelse = (1 if stmt.orelse else 0) + _branches(stmt.orelse)
        return _branches(stmt.body) + handlers + orelse + _branches(stmt.finalbody)
    if isinstance(stmt, ast.Match):
        cases = sum(1 + _branches(case.body) for case in stmt.cases)
        return cases - (1 if stmt.cases and _irrefutable(stmt.cases[-1]) else 0)
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return 1 + _branches(stmt.body)
    return 0


def _irrefutable(case: ast.match_case) -> bool:
    pattern = case.pattern
    while isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        pattern = pattern.pattern
    return case.guard is None and isinstance(pattern, ast.MatchAs) and pattern.pattern is None


@dataclass(frozen=True)
class FunctionSize:
    module: str
    name: str
    line: int
    lines: int
    complexity: int


def functions(module: str, source: str) -> Iterator[FunctionSize]:
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            yield FunctionSize(
                module, node.name, node.lineno, end - node.lineno + 1, complexity(node)
            )


def size_violations(sources: Sources) -> list[str]:
    problems = []
    for module, source in sources.items():
        lines = len(source.splitlines())
        if lines > MAX_MODULE_LINES:
            problems.append(f"{module}: {lines} lines > {MAX_MODULE_LINES}")
        for fn in functions(module, source):
            where = f"{module}:{fn.line} {fn.name}()"
            if fn.lines > MAX_FUNCTION_LINES:
                problems.append(f"{where}: {fn.lines} lines > {MAX_FUNCTION_LINES}")
            if fn.complexity > MAX_COMPLEXITY:
                problems.append(f"{where}: complexity {fn.complexity} > {MAX_COMPLEXITY}")
    return problems


# -- the rules on the real tree ------------------------------------------------------------


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    return read_sources()


def _report(problems: list[str]) -> str:
    return "\n".join(problems)


def test_no_import_cycles(sources: dict[str, str]) -> None:
    cycles = import_cycles(sources)
    assert not cycles, _report([" -> ".join(cycle) for cycle in cycles])


def test_nothing_imports_the_cli(sources: dict[str, str]) -> None:
    assert not cli_importers(sources)


def test_domain_code_neither_runs_nor_prints(sources: dict[str, str]) -> None:
    problems = layer_violations(sources) + domain_side_effects(sources)
    assert not problems, _report(problems)


def test_only_the_root_handler_exits(sources: dict[str, str]) -> None:
    """How uvdock ends is decided in one place each: exits here, signal handlers in run/."""
    problems = exit_violations(sources) + signal_violations(sources)
    assert not problems, _report(problems)


def test_only_registry_opens_network_connections(sources: dict[str, str]) -> None:
    problems = network_violations(sources)
    assert not problems, _report(problems)


def test_only_formats_reads_yaml(sources: dict[str, str]) -> None:
    problems = yaml_violations(sources)
    assert not problems, _report(problems)


def test_only_the_file_layer_writes_files(sources: dict[str, str]) -> None:
    problems = write_violations(sources)
    assert not problems, _report(problems)


def test_cli_spec_is_a_leaf(sources: dict[str, str]) -> None:
    assert not leaf_violations(sources)


def test_modules_and_functions_stay_small(sources: dict[str, str]) -> None:
    problems = size_violations(sources)
    assert not problems, _report(problems)


def test_every_command_module_exists(sources: dict[str, str]) -> None:
    missing = [
        f"{group} {name}: {PACKAGE}.commands.{spec.module}"
        for (group, name), spec in cli_spec.COMMANDS.items()
        if f"{PACKAGE}.commands.{spec.module}" not in sources
    ]
    assert not missing, _report(missing)


def test_the_cli_depends_on_every_command_module(sources: dict[str, str]) -> None:
    """The importlib dispatch is seen, so a command importing the CLI would show as a circle."""
    commands = {m for m in sources if m.startswith(f"{PACKAGE}.commands.")}
    assert commands <= internal_imports(f"{PACKAGE}.cli.main", sources)


def test_architecture_md_names_every_rule_and_every_part(sources: dict[str, str]) -> None:
    """ARCHITECTURE.md stays the map: each rule above by its test name, each top-level part."""
    text = (SRC.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rules = [
        name
        for name, value in globals().items()
        if name.startswith("test_")
        and "sources" in inspect.signature(value).parameters
        and name != "test_architecture_md_names_every_rule_and_every_part"
    ]
    parts = {
        module.split(".")[1]
        + ("/" if _is_package(".".join(module.split(".")[:2]), sources) else ".py")
        for module in sources
        if module.count(".") >= 1
    }
    missing = [f"rule {r}" for r in rules if f"`{r}`" not in text]
    missing += [f"part {p}" for p in sorted(parts) if p not in text]
    assert not missing, _report(missing)


# -- each rule fires on a synthetic tree ---------------------------------------------------


def _tree(**modules: str) -> dict[str, str]:
    return {name.replace("__", "."): source for name, source in modules.items()}


def test_a_circle_is_reported_with_its_path() -> None:
    tree = _tree(
        uvdock="",
        uvdock__a="from uvdock import b\n",
        uvdock__b="def f() -> None:\n    from uvdock.c import x\n",
        uvdock__c="import uvdock.a\nx = 1\n",
        uvdock__d="from uvdock import a\n",
    )
    assert import_cycles(tree) == [["uvdock.a", "uvdock.b", "uvdock.c", "uvdock.a"]]


def test_a_relative_import_and_importlib_make_a_circle() -> None:
    tree = _tree(
        uvdock="",
        uvdock__cli="",
        uvdock__cli__main=(
            "import importlib\n"
            "def run(name: str) -> None:\n"
            "    importlib.import_module(f'uvdock.commands.{name}')\n"
        ),
        uvdock__commands="",
        uvdock__commands__run="from ..cli import main\n",
    )
    assert import_cycles(tree) == [["uvdock.cli.main", "uvdock.commands.run", "uvdock.cli.main"]]
    assert cli_importers(tree) == ["uvdock.commands.run imports uvdock.cli.main"]


def test_importing_the_cli_is_reported_except_from_main() -> None:
    tree = _tree(uvdock="", uvdock__cli="", uvdock__cli__main="", uvdock__cli__parse="")
    tree["uvdock.__main__"] = "from uvdock.cli.main import main\n"
    tree["uvdock.cli.main"] = "from uvdock.cli import parse\n"  # inside cli/: its own business
    tree["uvdock.commands.completion"] = "from uvdock.cli.parse import command_parser\n"
    assert cli_importers(tree) == []
    tree["uvdock.config.settings"] = "def f() -> None:\n    from uvdock.cli import main as cli\n"
    tree["uvdock.commands.run"] = "from uvdock.cli import parse\n"
    tree["uvdock.commands.spec_user"] = "from uvdock.cli import spec\n"  # a leaf of data: free
    assert sorted(cli_importers(tree)) == [
        "uvdock.commands.run imports uvdock.cli.parse",
        "uvdock.config.settings imports uvdock.cli.main",
    ]


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("import sys\nsys.exit(2)\n", "uvdock.commands.x:2 calls sys.exit()"),
        ("def f() -> None:\n    raise SystemExit(3)\n", "uvdock.commands.x:2 uses SystemExit"),
        ("import os\nos._exit(1)\n", "uvdock.commands.x:2 calls os._exit()"),
        ("from sys import exit\n", "uvdock.commands.x:1 imports sys.exit"),
        ("exit(1)\n", "uvdock.commands.x:1 calls exit()"),
    ],
)
def test_ending_the_process_outside_the_root_handler_is_reported(source: str, problem: str) -> None:
    tree = _tree(uvdock="", uvdock__commands="", uvdock__commands__x=source)
    assert exit_violations(tree) == [problem]
    for allowed in ("uvdock.cli.main", "uvdock.__main__"):
        assert exit_violations({allowed: source}) == []


def test_signal_handling_outside_run_is_reported() -> None:
    tree = _tree(uvdock__commands__x="import signal\n", uvdock__run__y="import signal\n")
    assert signal_violations(tree) == ["uvdock.commands.x imports signal"]


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("import socket\n", "socket"),
        ("import http.client\n", "http.client"),
        ("from http import client\n", "http.client"),
        ("from urllib.request import urlopen\n", "urllib.request.urlopen"),
        ("def f() -> None:\n    import ssl\n", "ssl"),
        ("from http.server import HTTPServer\n", "http.server.HTTPServer"),
        ("import importlib\nimportlib.import_module('socket')\n", "socket"),
    ],
)
def test_network_code_outside_registry_is_reported(source: str, name: str) -> None:
    tree = _tree(uvdock="", uvdock__image="", uvdock__image__pins=source)
    assert network_violations(tree) == [f"uvdock.image.pins imports {name}"]
    tree = _tree(uvdock="", uvdock__registry="", uvdock__registry__client=source)
    assert network_violations(tree) == []


def test_yaml_read_outside_formats_is_reported() -> None:
    source = "def f() -> None:\n    import yaml\n    from yaml.nodes import Node\n"
    tree = _tree(uvdock="", uvdock__image="", uvdock__image__ci=source)
    assert yaml_violations(tree) == [
        "uvdock.image.ci imports yaml",
        "uvdock.image.ci imports yaml.nodes.Node",
    ]
    tree = _tree(uvdock="", uvdock__formats="", uvdock__formats__yaml=source)
    assert yaml_violations(tree) == []


def test_url_parsing_is_not_network_code() -> None:
    tree = _tree(
        uvdock="", uvdock__image="", uvdock__image__pins="from urllib.parse import quote\n"
    )
    assert network_violations(tree) == []


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("open(p, 'w')\n", "opens a file for writing"),
        ("open(p, mode='ab')\n", "opens a file for writing"),
        ("open(p, 'r+')\n", "opens a file for writing"),
        ("open(p, m)\n", "opens a file for writing"),
        ("p.open('wb')\n", "opens a file for writing"),
        ("p.write_text('x')\n", "calls .write_text()"),
        ("(a / 'b').write_bytes(b'x')\n", "calls .write_bytes()"),
        ("p.unlink()\n", "calls .unlink()"),
        ("p.parent.mkdir(parents=True)\n", "calls .mkdir()"),
        ("p.touch()\n", "calls .touch()"),
        ("import os\nos.replace(a, b)\n", "calls os.replace()"),
        ("import os\nos.open(p, os.O_CREAT)\n", "calls os.open()"),
        ("import shutil\nshutil.rmtree(p)\n", "calls shutil.rmtree()"),
        ("import shutil\nshutil.copyfile(a, b)\n", "calls shutil.copyfile()"),
        ("import tempfile\ntempfile.mkstemp()\n", "calls tempfile.mkstemp()"),
        ("from os import replace\n", "imports os.replace"),
        ("from shutil import move\n", "imports shutil.move"),
    ],
)
def test_a_file_write_outside_the_file_layer_is_reported(source: str, problem: str) -> None:
    line = source.count("\n")
    tree = _tree(uvdock="", uvdock__lock="", uvdock__lock__state=source)
    assert write_violations(tree) == [f"uvdock.lock.state:{line} {problem}"]
    for allowed in (
        "uvdock.files.edit",
        "uvdock.files.state_store",
        "uvdock.files.repolock",
        "uvdock.run.ci_container",
    ):
        assert write_violations({allowed: source}) == []


@pytest.mark.parametrize(
    "source",
    [
        "open(p)\n",
        "open(p, 'rb')\n",
        "open(p, encoding='utf-8')\n",
        "p.open()\n",
        "p.open(encoding='utf-8', newline='')\n",
        "branches.open(taken)\n",  # a method named open that is not Path.open
        "p.read_text()\n",
        "s.replace('a', 'b')\n",  # str.replace, not os.replace
        "import os\nos.stat(p)\n",
    ],
)
def test_reading_is_not_writing(source: str) -> None:
    assert write_violations(_tree(uvdock="", uvdock__lock="", uvdock__lock__state=source)) == []


def test_domain_code_importing_a_writer_is_reported() -> None:
    tree = _tree(
        uvdock="",
        uvdock__files="",
        uvdock__files__edit="",
        uvdock__files__state_store="",
        uvdock__recipes="",
        uvdock__recipes__mark="from uvdock.files.edit import FileEdit, apply\n",
        uvdock__recipes__plan="from uvdock.files import edit\n",
        uvdock__lock="",
        uvdock__lock__resolve_state="from uvdock.files.state_store import save\n",
        uvdock__commands="",
        uvdock__commands__x="from uvdock.files.edit import apply\nfrom uvdock.files import state_store\n",
    )
    assert write_violations(tree) == [
        "uvdock.recipes.mark imports uvdock.files.edit.apply",
        "uvdock.recipes.plan imports uvdock.files.edit",
        "uvdock.lock.resolve_state imports uvdock.files.state_store.save",
    ]


def test_domain_code_importing_run_or_output_is_reported() -> None:
    tree = _tree(
        uvdock="",
        uvdock__ui="",
        uvdock__ui__output="",
        uvdock__run="",
        uvdock__run__proc="",
        uvdock__image="",
        uvdock__image__pins="from uvdock.run.proc import x\nfrom uvdock.ui import output\n",
        uvdock__doctor="",
        uvdock__doctor__checks="from uvdock.run import proc\n",
        uvdock__doctor__signatures="from ..run import proc\n",
        uvdock__config="from uvdock.run import proc\n",
    )
    assert sorted(layer_violations(tree)) == [
        "uvdock.config imports uvdock.run.proc",
        "uvdock.doctor.signatures imports uvdock.run.proc",
        "uvdock.image.pins imports uvdock.run.proc",
        "uvdock.image.pins imports uvdock.ui.output",
    ]


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("def f() -> None:\n    print('hi')\n", "uvdock.lts.pin:2 calls print()"),
        ("import sys\nsys.stderr.write('x')\n", "uvdock.lts.pin:2 uses sys.stderr"),
        ("import subprocess\n", "uvdock.lts.pin:1 imports subprocess"),
        ("def f() -> None:\n    from pty import spawn\n", "uvdock.lts.pin:2 imports pty"),
        ("import os\nos.execvp('x', ['x'])\n", "uvdock.lts.pin:2 uses os.execvp"),
        ("import os\nos.system('x')\n", "uvdock.lts.pin:2 uses os.system"),
        ("from os import fork\n", "uvdock.lts.pin:1 imports os.fork"),
    ],
)
def test_a_printing_or_spawning_domain_module_is_reported(source: str, problem: str) -> None:
    tree = _tree(uvdock="", uvdock__lts="", uvdock__lts__pin=source)
    assert domain_side_effects(tree) == [problem]
    tree["uvdock.commands.x"] = tree.pop("uvdock.lts.pin")
    assert domain_side_effects(tree) == []


def test_a_leaf_importing_uvdock_is_reported() -> None:
    tree = _tree(
        uvdock="",
        uvdock__errors="",
        uvdock__cli="",
        uvdock__cli__spec="from uvdock import errors\n",
    )
    assert leaf_violations(tree) == ["uvdock.errors"]


def test_long_modules_and_functions_are_reported() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(59))
    fits = "def fits() -> None:\n" + body
    too_long = "def too_long() -> None:\n" + body + "    x = 0\n"
    assert size_violations({"uvdock.m": fits}) == []
    assert size_violations({"uvdock.m": too_long}) == ["uvdock.m:1 too_long(): 61 lines > 60"]
    assert size_violations({"uvdock.m": "x = 1\n" * 601}) == ["uvdock.m: 601 lines > 600"]


def test_a_complex_function_is_reported() -> None:
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(15))
    source = "def branchy(x: int) -> int:\n" + branches + "    return -1\n"
    assert size_violations({"uvdock.m": source}) == ["uvdock.m:1 branchy(): complexity 16 > 15"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("pass", 1),
        ("if a:\n    pass\nelif b:\n    pass\nelse:\n    pass", 3),
        ("for x in y:\n    pass\nelse:\n    pass", 2),
        ("while a and b or c:\n    pass", 2),
        ("try:\n    pass\nexcept A:\n    pass\nexcept B:\n    pass\nelse:\n    pass", 4),
        ("with a, b:\n    if c:\n        pass", 2),
        ("match a:\n    case 1:\n        pass\n    case _:\n        pass", 2),
        ("match a:\n    case 1:\n        pass\n    case 2:\n        pass", 3),
        ("def inner() -> None:\n    if a:\n        pass", 3),
        ("return [x for x in y if x]", 1),
    ],
)
def test_complexity_counts_as_ruff_does(body: str, expected: int) -> None:
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    [outer, *_] = functions("m", "def f() -> None:\n" + indented)
    assert outer.complexity == expected


def test_only_the_process_door_starts_processes(sources: dict[str, str]) -> None:
    problems = process_door_violations(sources)
    assert not problems, _report(problems)


def test_dockerfiles_are_read_by_one_reader(sources: dict[str, str]) -> None:
    problems = dockerfile_reader_violations(sources)
    assert not problems, _report(problems)


def test_markdown_code_spans_are_written_in_one_place(sources: dict[str, str]) -> None:
    problems = markdown_violations(sources)
    assert not problems, _report(problems)


def test_a_process_started_outside_the_door_is_reported() -> None:
    tree = _tree(
        uvdock="",
        uvdock__run="",
        uvdock__run__proc="import subprocess\n",
        uvdock__run__git="import subprocess\n",
        uvdock__commands="",
        uvdock__commands__x="import os\ndef f() -> None:\n    os.execvp('x', ['x'])\n    print(1)\n",
    )
    assert process_door_violations(tree) == [
        "uvdock.run.git:1 imports subprocess",
        "uvdock.commands.x:3 uses os.execvp",
    ]


def test_a_second_dockerfile_reader_is_reported() -> None:
    source = "import re\nA = re.compile(r'^\\s*ARG\\s+(\\w+)', re.I)\nB = re.compile('FROMAGE')\n"
    tree = _tree(uvdock="", uvdock__image="", uvdock__image__dockerfile=source)
    tree["uvdock.project.sync"] = source
    assert dockerfile_reader_violations(tree) == [
        "uvdock.project.sync:2 reads Dockerfile instructions"
    ]


def test_a_second_code_span_writer_is_reported() -> None:
    source = "import re\nRUN = re.compile(r'`+')\ndef f(n: int) -> str:\n    return '`' * n\n"
    tree = _tree(uvdock="", uvdock__ui="", uvdock__ui__markdown_text=source)
    tree["uvdock.lock.markdown"] = source
    assert markdown_violations(tree) == [
        "uvdock.lock.markdown:2 measures backtick runs",
        "uvdock.lock.markdown:4 builds a backtick fence",
    ]


def test_url_credentials_are_judged_in_one_place(sources: dict[str, str]) -> None:
    problems = url_credential_violations(sources)
    assert not problems, _report(problems)


def test_a_second_url_credential_reader_is_reported() -> None:
    source = "from urllib.parse import urlsplit\ndef f(u: str) -> bool:\n    return bool(urlsplit(u).password)\n"
    tree = _tree(uvdock="", uvdock__ui="", uvdock__ui__redact=source, uvdock__lts="")
    tree["uvdock.lts.pin"] = source
    tree["uvdock.registry.client"] = source
    assert url_credential_violations(tree) == ["uvdock.lts.pin:3 reads a URL's .password"]


def test_nothing_below_the_commands_imports_them(sources: dict[str, str]) -> None:
    problems = upward_imports(sources)
    assert not problems, _report(problems)


def test_an_upward_import_is_reported() -> None:
    tree = _tree(uvdock="", uvdock__commands="", uvdock__commands__diff="x = 1\n", uvdock__run="")
    tree["uvdock.run.uv"] = "def f() -> None:\n    from uvdock.commands import diff\n"
    tree["uvdock.commands.add"] = "from uvdock.commands import diff\n"
    assert upward_imports(tree) == ["uvdock.run.uv imports uvdock.commands.diff"]


def test_repository_files_are_read_through_one_reader(sources: dict[str, str]) -> None:
    problems = read_violations(sources)
    assert not problems, _report(problems)


def test_a_direct_read_outside_the_file_layer_is_reported() -> None:
    tree = _tree(
        uvdock="",
        uvdock__files="",
        uvdock__files__textlines="def f(p):\n    return p.read_bytes()\n",
        uvdock__image="",
        uvdock__image__scan="def f(p):\n    return p.read_text()\n",
        uvdock__commands="",
        uvdock__commands__x="def f(p):\n    with open(p) as h:\n        return h.read()\n",
        uvdock__commands__y="def f(p, b):\n    b.open(p)\n    open(f'/proc/{p}/stat')\n    p.open('rb')\n",
    )
    assert read_violations(tree) == [
        "uvdock.image.scan:2 calls .read_text()",
        "uvdock.commands.x:2 calls open()",
        "uvdock.commands.y:4 calls .open()",
    ]
