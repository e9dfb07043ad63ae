"""The user's trust record is never lost or misread (issue 20, item 2, acceptance review).

A trust file uvdock cannot read (no permission, not UTF-8, lines that are not records) is
the user's data: `uvdock trust` must not replace it with a file holding only this
repository's record, and `--show` / `--revoke` must not report "not trusted" / "revoked"
from a file they could not read. Exit 3 naming the file, the bytes unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import RunCli

PYPROJECT = '[project]\nname = "demo"\nversion = "0.1"\nrequires-python = ">=3.11"\n'
OTHER = b'{"repo": "/elsewhere", "source": "uvdock.toml", "sha256": "ab"}\n'

BROKEN = {
    "not utf-8": OTHER + b"\xff\xfe\n",
    "a line that is not a record": OTHER + b"garbage\n",
    "a record missing a field": OTHER + b'{"repo": "/x"}\n',
}


@pytest.mark.parametrize("args", [(), ("--show",), ("--revoke",)], ids=["trust", "show", "revoke"])
@pytest.mark.parametrize("case", list(BROKEN))
def test_an_unreadable_trust_file_is_refused_and_kept(
    case: str,
    args: tuple[str, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make_repo: Callable[..., Path],
    run_cli: RunCli,
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    record = tmp_path / "xdg" / "uvdock" / "trusted"
    record.parent.mkdir(parents=True)
    record.write_bytes(BROKEN[case])
    repo = make_repo({"pyproject.toml": PYPROJECT, "uvdock.toml": 'engine = "local"\n'})
    result = run_cli("--repo", repo, "trust", *args)
    assert result.code == 3, (result.code, result.out, result.err)
    assert str(record) in result.err and "Traceback" not in result.err
    assert "not trusted" not in result.out and "revoked" not in result.out
    assert record.read_bytes() == BROKEN[case]
