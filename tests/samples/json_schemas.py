"""The documented shape of every --json document (docs/json.md), as data.

A schema maps each key to its type: "str", "int", "bool", "object" (free-form keys), "list";
"str?" etc. may be null, as may a Nullable(...); a dict is an object with those keys, a one-item list a list of
such items. A key ending in "?" may be absent. Every document also has the ENVELOPE keys.
`flat_keys` spells the keys as docs/json.md lists them (`pins[].path`, `handoff.title`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

Spec = Any


class Nullable(NamedTuple):
    """An object or list that may be null."""

    spec: Spec


ENVELOPE: dict[str, Spec] = {
    "command": "str",
    "ok": "bool",
    "exit_code": "int",
    "dry_run": "bool",
    "planned?": [
        {
            "argv": ["str"],
            "placement": Nullable(
                {
                    "mode": "str",
                    "engine": "str",
                    "container": "str",
                    "image": "str",
                    "extra_args": ["str"],
                    "env": "list",
                    "by_hand": "bool",
                    "said": "str",
                    "init": "str",
                }
            ),
        }
    ],
    "error?": {"message": "str", "hint": "str?", "exit_code": "int"},
}

PIN = {
    "path": "str",
    "line": "int",
    "lane": "str?",
    "tag": "str",
    "managed": "bool",
    "kind": "str",
}
SHOWN_PIN = {**PIN, "why?": "str"}  # image show: an unmanaged base says why
FINDING = {
    "kind": "str",
    "lane": "str",
    "path": "str",
    "line": "int?",
    "tag": "str?",
    "expected": "str?",
    "message": "str",
}
REGISTRY = {"checked": "bool", "url": "str", "skipped?": "str", "platforms?": ["str"]}
PLATFORM_IMAGE = {"platform": "str", "digest": "str", "env": "object?", "problem": "str?"}
TAG_IMAGE = {"tag": "str", "digest": "str", "platforms": [PLATFORM_IMAGE]}
COMPONENT = {
    "name": "str",
    "key": "str",
    "from": "str?",
    "to": "str?",
    "changed": "bool",
    "callout": "str?",
}
IMAGE_CONTENTS = {
    "checked": "bool",
    "skipped": "str?",
    "from": Nullable(TAG_IMAGE),
    "to": Nullable(TAG_IMAGE),
    "versions": [COMPONENT],
    "callouts": ["str"],
    "not_found": ["str"],
    "problems": ["str"],
    "release_notes": "str",
}
LOCK_ENTRY = {"version": "str?", "source": "str?"}
LOCK_DIFF = {
    "added": [{"name": "str", "versions": ["str"], "entries": [LOCK_ENTRY]}],
    "removed": [{"name": "str", "versions": ["str"], "entries": [LOCK_ENTRY]}],
    "changed": [
        {
            "name": "str",
            "from": ["str"],
            "to": ["str"],
            "from_entries": [LOCK_ENTRY],
            "to_entries": [LOCK_ENTRY],
        }
    ],
}
PYPROJECT_MERGE = {
    "merged": "bool",
    "via": "str?",
    "taken": "object",
    "decisions": ["str"],
    "conflicts": [{"path": "str", "ours": "str?", "theirs": "str?"}],
    "pins": [{"package": "str", "pins": "object"}],
}

SCHEMAS: dict[str, dict[str, Spec]] = {
    # run, shell, sync, image build/pull/enroot, and the dry runs of add/remove/lock
    "run": {},
    "shell": {},
    "sync": {},
    "image build": {},
    "image pull": {},
    "image enroot": {},
    "add": {"lock_changed?": "bool", **{f"{k}?": v for k, v in LOCK_DIFF.items()}},
    "remove": {"lock_changed?": "bool", **{f"{k}?": v for k, v in LOCK_DIFF.items()}},
    "lock": {
        "lock_changed?": "bool",
        **{f"{k}?": v for k, v in LOCK_DIFF.items()},
        "title?": "str",
        "kinds?": "object",
        "pr_body?": "str",
    },
    "lock diff": {"lock": "str?", **LOCK_DIFF},
    "lock resolve": {
        "conflict?": "bool",
        "resolved?": "bool",
        "lock?": "str",
        "ref?": "str",
        "ref_source?": "str",
        "commit?": "str",
        "operation?": "str?",
        "other_conflicts?": ["str"],
        "next_step?": "str",
        "diff?": LOCK_DIFF,
        "pyproject?": Nullable(PYPROJECT_MERGE),
        "branch_only?": {
            "kept": [{"name": "str", "version": "str"}],
            "not_kept": [{"name": "str", "version": "str", "reason": "str"}],
        },
        "restored?": "str",
        "stages?": ["int"],
    },
    "lts show": {
        "path": "str",
        "pins": [
            {
                "name": "str",
                "spec": "str",
                "line": "int",
                "version": "str?",
                "url": "str?",
                "extras": ["str"],
                "marker": "str?",
                "comment": "str?",
                "hashes": ["str"],
            }
        ],
    },
    "lts check": {"path": "str", "pins": "int", "problems": [{"line": "int", "message": "str"}]},
    "lts drift": {
        "path": "str",
        "lock": "str",
        "drift": [
            {
                "name": "str",
                "lts": "str",
                "lock": "str?",
                "status": "str",
                "level": "str?",
                "distance": "int?",
            }
        ],
    },
    "lts pin": {
        "path": "str",
        "changes": [{"name": "str", "line": "int", "old": "str?", "new": "str", "added": "bool"}],
        "unchanged": ["str"],
        "diff": "str",
        "next_steps": ["str"],
    },
    "image show": {
        "pins?": [SHOWN_PIN],
        "images?": [
            {
                "lane": "str",
                "found": "bool",
                "tag": "str",
                "digest?": "str",
                "platforms?": [PLATFORM_IMAGE],
                "versions?": [COMPONENT],
            }
        ],
    },
    "image check": {"lanes": "object", "managed": [PIN], "findings": [FINDING]},
    "image bump": {
        "lane": "str",
        "from": "str?",
        "to": "str",
        "latest?": "str",
        "changed": [PIN],
        "warnings": [FINDING],
        "handoff?": {
            "title": "str",
            "label": "str",
            "rerun": "str",
            "golden_values": "str",
            "regressions": "str",
        },
        "registry": Nullable(REGISTRY),
        "image_contents?": IMAGE_CONTENTS,
        "pr_body?": "str",
    },
    "image tags": {
        "registry": "str",
        "total": "int",
        "pins": "object",
        "tags": [{"tag": "str", "pinned_by": ["str"]}],
    },
    "recipe show": {
        "case": "str",
        "runs": [
            {
                "path": "str",
                "line": "int",
                "environment": ["str"],
                "scope": ["str"],
                "platforms": ["str"],
                "platforms_inherited": "bool",
                "issue": "int?",
            }
        ],
    },
    "recipe mark-broken": {
        "case": "str",
        "files": ["str"],
        "changes": [{"path": "str", "line": "int", "what": "str"}],
        "notes": ["str"],
    },
    "recipe unmark": {
        "case": "str",
        "files": ["str"],
        "changes": [{"path": "str", "line": "int", "what": "str"}],
        "notes": ["str"],
    },
    "doctor": {
        "checks?": [
            {
                "name": "str",
                "ok": "bool?",
                "status": "str",
                "detail": "str",
                "fix": "str?",
                "seconds": "float",
            }
        ],
        "findings?": [
            {
                "signature": "str",
                "line": "str",
                "line_number": "int",
                "cause": "str",
                "fix": "str",
                "command": "str",
            }
        ],
        "error_lines?": [{"line_number": "int", "line": "str"}],
    },
    "merge-driver install": {
        "driver": "str",
        "config": "object",
        "attributes": "str",
        "attribute_line": "str",
        "attribute_lines": ["str"],
        "changed": "bool",
    },
    "merge-driver pyproject": {"pyproject": Nullable(PYPROJECT_MERGE)},
    "completion": {"shell?": "str", "script?": "str", "cases?": ["str"]},
    "trust": {"repo": "str", "source": "str?", "keys": "object", "state": "str", "changed": "bool"},
    # a command line that was not understood: the envelope, `command` empty
    "": {},
}

_SCALARS = {"str": str, "int": int, "float": float, "bool": bool, "object": dict, "list": list}


def schema_for(command: str, *, failed: bool = False) -> dict[str, Spec]:
    """The command's schema; a document with `error` may lack the command's own keys."""
    own = SCHEMAS[command]
    if failed:
        own = {key if key.endswith("?") else key + "?": spec for key, spec in own.items()}
    return {**ENVELOPE, **own}


def check(document: dict[str, Any]) -> None:
    """Raise AssertionError naming the first key whose value breaks the documented shape."""
    name = document["command"]
    _object(document, schema_for(name, failed="error" in document), name or "(no command)")


def _object(value: Any, schema: dict[str, Spec], where: str) -> None:
    assert isinstance(value, dict), f"{where}: not an object: {value!r}"
    keys = {key.rstrip("?"): key.endswith("?") for key in schema}
    unknown = set(value) - set(keys)
    assert not unknown, f"{where}: undocumented keys {sorted(unknown)}"
    for key, optional in keys.items():
        if key not in value:
            assert optional, f"{where}: missing key {key}"
            continue
        spec = schema[key + "?" if optional else key]
        _value(value[key], spec, f"{where}.{key}")


def _value(value: Any, spec: Spec, where: str) -> None:
    if isinstance(spec, Nullable):
        if value is not None:
            _value(value, spec.spec, where)
    elif isinstance(spec, dict):
        _object(value, spec, where)
    elif isinstance(spec, list):
        assert isinstance(value, list), f"{where}: not a list: {value!r}"
        for index, item in enumerate(value):
            _value(item, spec[0], f"{where}[{index}]")
    else:
        nullable = spec.endswith("?")
        if value is None:
            assert nullable, f"{where}: null where {spec} is documented"
            return
        wanted = _SCALARS[spec.rstrip("?")]
        ok = isinstance(value, wanted) and not (wanted is int and isinstance(value, bool))
        assert ok, f"{where}: {type(value).__name__} where {spec} is documented: {value!r}"


def flat_keys(schema: dict[str, Spec], prefix: str = "") -> list[str]:
    """Every key as docs/json.md lists it: `pins[].path`, `handoff.title`."""
    keys: list[str] = []
    for raw, spec in schema.items():
        key = prefix + raw.rstrip("?")
        keys.append(key)
        spec = spec.spec if isinstance(spec, Nullable) else spec
        if isinstance(spec, dict):
            keys += flat_keys(spec, key + ".")
        elif isinstance(spec, list) and isinstance(spec[0], dict):
            keys += flat_keys(spec[0], key + "[].")
    return keys
