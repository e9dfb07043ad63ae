"""Property: whatever the layout, a bump changes exactly the lane's managed lines."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from samples.pins import DEV, LTS, build_yml, dev_row, lts_row, pin_files, utility_row

from uvdock.config.settings import Config
from uvdock.image import pins
from uvdock.image.bump import plan_bump
from uvdock.image.scan import scan_managed
from uvdock.registry.tags import PREFIX

OLD = {"dev": DEV, "lts": LTS}


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, str | bytes]:
    rows = [lts_row("amd64"), lts_row("arm64"), dev_row("amd64"), dev_row("arm64"),
            utility_row("amd64"), utility_row("arm64")]  # fmt: skip
    rows = draw(st.permutations(rows))
    rows = [draw(st.permutations(row)) for row in rows]
    step = draw(st.sampled_from([2, 4]))
    yml = build_yml(
        rows,
        indent=draw(st.sampled_from([4, 6, 8])),
        step=step,
        quotes=draw(st.lists(st.sampled_from(["", "'", '"']), min_size=1, max_size=3)),
        comments=draw(st.booleans()),
        eol=draw(st.sampled_from(["\n", "\r\n"])),
    )
    dev_newline = draw(st.sampled_from(["", "\n", "\r\n"]))
    lts_newline = draw(st.sampled_from(["", "\n"]))
    return pin_files(yml, dev_pin=DEV + dev_newline, lts_pin=LTS + lts_newline)


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=layouts(),
    lane=st.sampled_from(["dev", "lts"]),
    year=st.integers(min_value=26, max_value=40),
    month=st.integers(min_value=1, max_value=12),
)
def test_bump_changes_exactly_the_managed_lines(
    files: dict[str, str | bytes], lane: str, year: int, month: int
) -> None:
    tag = f"{year}.{month:02d}-py3"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, files)
        scan = scan_managed(root, Config())
        assert pins.check(scan) == []
        managed = {(p.path, p.line) for p in scan.lane_pins(lane)}
        plan = plan_bump(root, scan, lane, tag, allow_downgrade=True)

    new_value = PREFIX + tag
    changed_lines: set[tuple[str, int]] = set()
    touched = {edit.name: edit for edit in plan.edits}
    for path, content in files.items():
        old = content if isinstance(content, str) else content.decode()
        new = touched[path].new if path in touched else old
        old_lines, new_lines = old.split("\n"), new.split("\n")
        assert len(old_lines) == len(new_lines)  # final newline kept or absent as before
        for number, (before, after) in enumerate(zip(old_lines, new_lines, strict=True), 1):
            if before != after:
                changed_lines.add((path, number))
                # Only the value differs: quotes, comments, CR and indentation stay.
                assert after == before.replace(OLD[lane], new_value)
    if tag == OLD[lane].rsplit(":", 1)[1]:
        assert changed_lines == set() and plan.noop
    else:
        assert changed_lines == managed
        assert all(p.lane == lane for p in plan.changed)
