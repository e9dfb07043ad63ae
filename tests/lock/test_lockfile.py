"""lockfile: the fast scanner equals tomllib, conflict markers, and the package diff."""

from __future__ import annotations

import re

import pytest
from conftest import MEGATRON_LM
from samples.lock_reference import read_packages_tomllib

from uvdock.lock import lockfile

REAL_LOCK = MEGATRON_LM / "uv.lock"
PYPI = "https://pypi.org/simple"

SMALL = """version = 1
revision = 2
requires-python = ">=3.11"

[[package]]
name = "Alpha_Pkg"
version = "1.0.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "beta" },
]
wheels = [
    { url = "https://x.invalid/alpha.whl", hash = "sha256:00" },
]

[package.optional-dependencies]
extra = [
    { name = "gamma" },
]

[[package]]
name = "beta"
version = "2.0.0"
source = { git = "https://github.com/o/beta.git?rev=v2#1111111111111111111111111111111111111111" }

[[package]]
name = "demo"
source = { editable = "." }

[package.metadata]
requires-dist = [{ name = "alpha-pkg" }]

[[package]]
name = "numpy"
version = "1.26.4"
source = { registry = "https://pypi.org/simple" }
resolution-markers = [
    "python_full_version < '3.12'",
]

[[package]]
name = "numpy"
version = "2.1.0"
source = { registry = "https://pypi.org/simple" }
"""


def test_scanner_reads_name_version_source() -> None:
    packages = lockfile.read_packages(SMALL)
    assert packages == {
        "alpha-pkg": frozenset({("1.0.0", "registry+https://pypi.org/simple")}),
        "beta": frozenset({("2.0.0", "git+https://github.com/o/beta.git?rev=v2#" + "1" * 40)}),
        "demo": frozenset({("", "editable+.")}),
        "numpy": frozenset({("1.26.4", "registry+" + PYPI), ("2.1.0", "registry+" + PYPI)}),
    }
    assert packages == read_packages_tomllib(SMALL)


def test_scanner_falls_back_to_tomllib_for_unusual_values() -> None:
    odd = SMALL.replace('name = "beta"', 'name = "b\\u0065ta"').replace(
        'source = { editable = "." }', "source = { path = 'local\\dir', subdirectory = \"x\" }"
    )
    assert lockfile.read_packages(odd) == read_packages_tomllib(odd)
    assert "beta" in lockfile.read_packages(odd)


def test_crlf_and_empty_and_not_a_lock() -> None:
    crlf = SMALL.replace("\n", "\r\n").encode()
    assert lockfile.read_packages(crlf) == lockfile.read_packages(SMALL)
    assert lockfile.read_packages(b"") == {}
    with pytest.raises(lockfile.LockfileError, match=r"not a uv\.lock"):
        lockfile.read_packages('[project]\nname = "x"\n')
    with pytest.raises(lockfile.LockfileError, match="conflict markers"):
        lockfile.read_packages(SMALL + "<<<<<<< HEAD\n=======\n>>>>>>> main\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\n<<<<<<< HEAD\nb\n", True),
        ("a\n=======\n", True),
        ("a\n>>>>>>> 1234abc (msg)\n", True),
        ("a\n||||||| base\n", True),
        ("a\n>>>>>>>\n", True),
        ('x = "<<<<<<< not at start"\n', False),
        ("========\n", False),
        ("<<<<<<<<\n", False),
        ("", False),
    ],
)
def test_conflict_markers(text: str, expected: bool) -> None:
    assert lockfile.has_conflict_markers(text) is expected
    assert lockfile.has_conflict_markers(text.encode()) is expected


def test_marker_lines() -> None:
    text = "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> x\n"
    assert lockfile.conflict_marker_lines(text) == [2, 4, 6]


def _block(name: str, version: str, source: str = f'{{ registry = "{PYPI}" }}') -> str:
    return f'\n[[package]]\nname = "{name}"\nversion = "{version}"\nsource = {source}\n'


def test_diff_added_removed_changed_and_json() -> None:
    base = "version = 1\n" + _block("keep", "1") + _block("old-one", "1") + _block("Bumped", "1")
    head = "version = 1\n" + _block("keep", "1") + _block("new_one", "3") + _block("bumped", "2")
    diff = lockfile.diff_locks(base, head)
    entry = {"version": "3", "source": f"registry+{PYPI}"}
    assert diff.to_json() == {
        "added": [{"name": "new-one", "versions": ["3"], "entries": [entry]}],
        "removed": [{"name": "old-one", "versions": ["1"], "entries": [entry | {"version": "1"}]}],
        "changed": [
            {
                "name": "bumped",
                "from": ["1"],
                "to": ["2"],
                "from_entries": [entry | {"version": "1"}],
                "to_entries": [entry | {"version": "2"}],
            }
        ],
    }
    assert not diff.is_empty
    assert lockfile.diff_locks(base, base).is_empty


def test_git_commit_change_with_same_version_is_a_change() -> None:
    git_a = '{ git = "https://github.com/o/te.git?rev=main#' + "a" * 40 + '" }'
    git_b = '{ git = "https://github.com/o/te.git?rev=main#' + "b" * 40 + '" }'
    diff = lockfile.diff_locks(
        "version = 1\n" + _block("te", "2.0", git_a), "version = 1\n" + _block("te", "2.0", git_b)
    )
    assert [c.name for c in diff.changed] == ["te"]
    assert diff.changed[0].before == ("2.0 (git https://github.com/o/te.git@aaaaaaaaaaaa)",)
    assert diff.changed[0].after == ("2.0 (git https://github.com/o/te.git@bbbbbbbbbbbb)",)


def test_registry_only_change_names_the_registries() -> None:
    other = '{ registry = "https://download.pytorch.org/whl/cu128" }'
    diff = lockfile.diff_locks(
        "version = 1\n" + _block("torch", "2.5"), "version = 1\n" + _block("torch", "2.5", other)
    )
    change = diff.changed[0]
    assert change.before != change.after
    assert "download.pytorch.org" in change.after[0]


def test_forked_lock_compares_sets() -> None:
    base = "version = 1\n" + _block("numpy", "1.26.4") + _block("numpy", "2.1.0")
    same = "version = 1\n" + _block("numpy", "2.1.0") + _block("numpy", "1.26.4")
    one = "version = 1\n" + _block("numpy", "2.1.0")
    assert lockfile.diff_locks(base, same).is_empty
    diff = lockfile.diff_locks(base, one)
    (changed,) = diff.to_json()["changed"]
    assert (changed["from"], changed["to"]) == (["1.26.4", "2.1.0"], ["2.1.0"])
    assert [e["version"] for e in changed["from_entries"]] == ["1.26.4", "2.1.0"]


@pytest.fixture
def real_lock() -> bytes:
    return REAL_LOCK.read_bytes()


def derive(real: bytes) -> bytes:
    """A lock a week later: one bump, one removal, one addition, one git source moved."""
    text = real.decode()
    absl = 'name = "absl-py"\nversion = "2.5.0"'
    text = text.replace(absl, absl.replace("2.5.0", "2.6.0"), 1)
    start = text.index('\n[[package]]\nname = "accelerate"\n')
    end = text.index("\n[[package]]\n", start + 1)
    text = text[:start] + text[end:]
    text += _block("brand-new", "0.1.0")
    te = re.search(
        r'(source = \{ git = "https://github\.com/NVIDIA/TransformerEngine\.git\?rev=)'
        r"[0-9a-f]{40}#[0-9a-f]{40}",
        text,
    )
    assert te is not None
    text = text[: te.start()] + te.group(1) + "c" * 40 + "#" + "c" * 40 + text[te.end() :]
    return text.encode()


def test_real_lock_scanner_equals_tomllib(real_lock: bytes) -> None:
    scanned = lockfile.read_packages(real_lock)
    assert scanned == read_packages_tomllib(real_lock)
    assert len(scanned) == 296
    derived = derive(real_lock)
    assert lockfile.read_packages(derived) == read_packages_tomllib(derived)


def test_real_lock_diff_against_derived(real_lock: bytes) -> None:
    diff = lockfile.diff_locks(real_lock, derive(real_lock)).to_json()
    assert [(a["name"], a["versions"]) for a in diff["added"]] == [("brand-new", ["0.1.0"])]
    assert [r["name"] for r in diff["removed"]] == ["accelerate"]
    assert [c["name"] for c in diff["changed"]] == ["absl-py", "transformer-engine"]
    assert diff["changed"][0]["from"] == ["2.5.0"] and diff["changed"][0]["to"] == ["2.6.0"]
    te = diff["changed"][1]
    assert te["from_entries"] != te["to_entries"]
    assert te["to_entries"][0]["source"].endswith("#" + "c" * 40)


def test_real_lock_unchanged_is_empty(real_lock: bytes) -> None:
    assert lockfile.diff_locks(real_lock, real_lock).is_empty


def _declared_by_full_parse(data: bytes) -> dict[str, frozenset[str]]:
    """The reference: the whole lock through tomllib."""
    import tomllib

    from uvdock.project.names import normalize_name

    document = tomllib.loads(data.decode())
    found: dict[str, set[str]] = {}

    def note(where: str, requirement: dict[str, object]) -> None:
        shown = ",".join(f"{k}={requirement[k]!r}" for k in sorted(requirement))
        found.setdefault(normalize_name(str(requirement["name"])), set()).add(f"{where}:{shown}")

    for table in document["package"]:
        if not {"virtual", "editable", "directory"} & set(table.get("source", {})):
            continue
        metadata = table.get("metadata", {})
        for requirement in metadata.get("requires-dist", []):
            note(table["name"], requirement)
        for group, listed in metadata.get("requires-dev", {}).items():
            for requirement in listed:
                note(f"{table['name']}:{group}", requirement)
    for key in ("requirements", "constraints", "overrides"):
        for requirement in document.get("manifest", {}).get(key, []):
            note(f"manifest:{key}", requirement)
    return {name: frozenset(specs) for name, specs in found.items()}


def test_declared_requirements_read_only_what_they_need_and_equal_a_full_parse() -> None:
    data = REAL_LOCK.read_bytes()
    declared = lockfile.declared_requirements(data)
    assert declared == _declared_by_full_parse(data)
    assert "torch" in declared and len(declared) > 50  # the manifest's overrides among them
