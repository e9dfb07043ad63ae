"""Changing LTS pins (uvdock.lts.pin): SPEC validation and byte-exact edits."""

from __future__ import annotations

import pytest
from conftest import MEGATRON_LM
from hypothesis import given, settings
from hypothesis import strategies as st

from uvdock.errors import InputRefused
from uvdock.lts import pin as lts_edit
from uvdock.lts import requirements as lts

REAL = MEGATRON_LM / "docker" / "lts" / "requirements.txt"


def _tail_column(parts: lts.LineParts) -> int:
    return len(parts.indent + parts.requirement + parts.gap)


def pin(text: str, *specs: str, add: bool = False) -> str:
    return lts_edit.plan_pins(text, lts_edit.parse_specs(specs), add=add).new_text


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("", "empty"),
        ("tqdm>=4", "not an exact pin"),
        ("tqdm~=4.0", "not an exact pin"),
        ("tqdm===4.0", "not an exact pin"),
        ("tqdm", "needs an exact version"),
        ("tqdm==", "empty version"),
        ("tqdm==1.*", "wildcard"),
        ("tqdm==banana", "invalid version"),
        ("tqdm==1..2", "invalid version"),
        ("tqdm==1; rm -rf /", "not a valid environment marker"),
        ("tqdm==1;python_version<'3.12'", "markers are not taken from SPEC"),
        ("tqdm==$(reboot)", "shell metacharacter"),
        ("tqdm==1`id`", "shell metacharacter"),
        ("tqdm==1|cat", "shell metacharacter"),
        ("tqdm==1 && id", "shell metacharacter"),
        ("tqdm==1>out", "shell metacharacter"),
        ("tqdm==1\\", "shell metacharacter"),
        ("tqdm==1\nevil==2", "newline or control character"),
        ("tqdm==1\r", "newline or control character"),
        ("--index-url=https://evil.invalid", "not name==VERSION"),
        ("-e .", "not name==VERSION"),
        ("x @ ", "empty URL"),
        ("x @ https://h/a b", "not allowed in the URL"),
        ("x @ https://h/$(id)", "not allowed in the URL"),
        ("x @ not-a-url", "not a valid URL"),
        ("x @ https://user:secret@h/x.git", "credentials"),
        ("x[bad extra]==1", "invalid extra"),
    ],
)
def test_bad_specs_are_refused(raw: str, why: str) -> None:
    with pytest.raises(InputRefused) as info:
        lts_edit.parse_spec(raw)
    assert why in info.value.message
    assert info.value.exit_code == 2
    assert "\n" not in info.value.message.replace(repr(raw), "")


@pytest.mark.parametrize(
    ("raw", "version", "url"),
    [
        ("tqdm==4.70.0", "4.70.0", None),
        ("flashinfer-python==0.6.16.post3", "0.6.16.post3", None),
        ("torch==2.5.0+cu124", "2.5.0+cu124", None),
        ("tqdm==1!4.68.0", "1!4.68.0", None),  # an epoch
        (
            "x @ git+https://github.com/a/b.git@v0.3.0",
            None,
            "git+https://github.com/a/b.git@v0.3.0",
        ),
        ("x@git+ssh://git@github.com/a/b.git@v1", None, "git+ssh://git@github.com/a/b.git@v1"),
        ("x @ https://h/x.whl?a=1&b=2#sha256=00", None, "https://h/x.whl?a=1&b=2#sha256=00"),
    ],
)
def test_good_specs(raw: str, version: str | None, url: str | None) -> None:
    spec = lts_edit.parse_spec(raw)
    assert (spec.version, spec.url) == (version, url)


def test_the_same_package_twice_is_refused() -> None:
    with pytest.raises(InputRefused, match="same package"):
        lts_edit.parse_specs(["Foo==1", "foo==2"])


def test_real_file_pin_changes_only_the_named_lines_and_round_trips() -> None:
    original = REAL.read_bytes().decode()
    changed = pin(
        original,
        "einops==0.8.10",
        "megatron_energon==7.4.1",
        "Emerging-Optimizers @ git+https://github.com/NVIDIA-NeMo/Emerging-Optimizers.git@v0.3.0",
    )
    old_lines = original.splitlines(keepends=True)
    new_lines = changed.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    differing = [i + 1 for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert differing == [11, 15, 22]
    assert new_lines[10] == "einops==0.8.10                         # was: einops~=0.8\n"
    assert (
        new_lines[14]
        == "megatron-energon[av_decode]==7.4.1     # was: megatron-energon[av_decode]~=6.0.1\n"
    )
    assert new_lines[21] == (
        "emerging_optimizers @ git+https://github.com/NVIDIA-NeMo/Emerging-Optimizers.git@v0.3.0\n"
    )
    back = pin(
        changed,
        "einops==0.8.2",
        "megatron-energon==7.3.2",
        "emerging-optimizers @ git+https://github.com/NVIDIA-NeMo/Emerging-Optimizers.git@v0.2.0",
    )
    assert back.encode() == REAL.read_bytes()


def test_pinning_the_same_version_changes_nothing() -> None:
    text = "tqdm==4.67.3\n"
    plan = lts_edit.plan_pins(text, lts_edit.parse_specs(["TQDM==4.67.3"]), add=False)
    assert plan.new_text == text and plan.changes == [] and plan.unchanged[0].name == "tqdm"


CRLF = (
    "# header\r\n"
    "Einops[Torch]==0.8.2        # aligned comment\r\n"
    'numpy==1.26.4 ; python_version < "3.12"  # marker\r\n'
    "url_pkg @ https://h/url_pkg-0.1.whl ; sys_platform == 'linux'\r\n"
    "long==1.0 # tight\r\n"
    "last==1.0"
)


def test_crlf_markers_extras_comment_columns_no_final_newline() -> None:
    changed = pin(
        CRLF,
        "einops==0.10.0",
        "NumPy==2.0.0",
        "url-pkg==0.2",
        "long==1.0.0.0.0.1",
        "last==2.0",
    )
    assert changed == (
        "# header\r\n"
        "Einops[Torch]==0.10.0       # aligned comment\r\n"
        'numpy==2.0.0 ; python_version < "3.12"   # marker\r\n'
        "url_pkg==0.2 ; sys_platform == 'linux'\r\n"
        "long==1.0.0.0.0.1 # tight\r\n"
        "last==2.0"
    )


def test_version_to_url_keeps_the_marker_apart() -> None:
    changed = pin('numpy==1.26.4; python_version < "3.12"\n', "numpy @ https://h/numpy-2.whl")
    assert changed == 'numpy @ https://h/numpy-2.whl ; python_version < "3.12"\n'
    assert lts.parse(changed).pins[0].marker == 'python_version < "3.12"'


def test_comment_column_when_the_new_text_does_not_fit() -> None:
    changed = pin("a==1  # c\n", "a==1.2.3.4.5")
    assert changed == "a==1.2.3.4.5 # c\n"


def test_extras_in_the_spec_must_match_the_file() -> None:
    assert pin("e[av_decode]==1\n", "e[AV-decode]==2") == "e[av_decode]==2\n"
    with pytest.raises(InputRefused, match="keeps its extras"):
        pin("e[av_decode]==1\n", "e[other]==2")


def test_hashed_lines_are_refused_and_other_lines_keep_their_hashes() -> None:
    text = "hashed==1.0 \\\n    --hash=sha256:aaaa\ninline==2 --hash=sha256:bb\nplain==3\n"
    with pytest.raises(InputRefused, match="pip options"):
        pin(text, "hashed==1.1")
    with pytest.raises(InputRefused, match="pip options"):
        pin(text, "inline==2.1")
    assert pin(text, "plain==4") == text.replace("plain==3", "plain==4")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a==1\n", "a==1\nnew==0.1\n"),
        ("a==1", "a==1\nnew==0.1"),
        ("a==1\r\n", "a==1\r\nnew==0.1\r\n"),
        ("a==1\r\nb==2", "a==1\r\nb==2\r\nnew==0.1"),
        ("", "new==0.1\n"),
    ],
)
def test_add_appends_in_the_file_style(text: str, expected: str) -> None:
    assert pin(text, "new==0.1", add=True) == expected


def test_unknown_name_is_refused_without_add_and_nothing_is_planned() -> None:
    with pytest.raises(InputRefused, match="not in the LTS pin set") as info:
        pin("a==1\n", "a==2", "b==1")
    assert info.value.hint is not None and "--add" in info.value.hint


def test_a_name_on_several_lines_is_refused() -> None:
    with pytest.raises(InputRefused, match="several lines"):
        pin("a==1 ; sys_platform == 'linux'\na==2 ; sys_platform == 'darwin'\n", "a==3")


NAMES = ["alpha", "Beta_Pkg", "gamma.x", "delta-y", "eps", "zeta9", "eta", "theta"]
versions = st.from_regex(r"\A[0-9]{1,3}(\.[0-9]{1,3}){0,3}(\.post[0-9])?\Z")


@st.composite
def lts_files(draw: st.DrawFn) -> tuple[str, list[str]]:
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=len(NAMES), unique=True))
    lines = []
    for name in names:
        line = f"{name}=={draw(versions)}"
        if draw(st.booleans()):
            line += ' ; python_version >= "3.10"'
        if draw(st.booleans()):
            line += (
                " " * draw(st.integers(1, 12)) + "# " + draw(st.sampled_from(["why", "was: x~=1"]))
            )
        lines.append(line)
        if draw(st.booleans()):
            lines.append("# a comment line")
    final = eol if draw(st.booleans()) else ""
    return eol.join(lines) + final, names


@settings(max_examples=80, deadline=None)  # sized to the suite budget (conftest.py)
@given(data=lts_files(), picks=st.data())
def test_property_pin_changes_exactly_the_named_lines(
    data: tuple[str, list[str]], picks: st.DataObject
) -> None:
    text, names = data
    chosen = picks.draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    new_versions = {n: picks.draw(versions) for n in chosen}
    specs = [f"{n.upper()}=={v}" for n, v in new_versions.items()]
    before = lts.parse(text)
    plan = lts_edit.plan_pins(text, lts_edit.parse_specs(specs), add=False)
    after = lts.parse(plan.new_text)
    old_lines = text.splitlines(keepends=True)
    new_lines = plan.new_text.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    named = {p.line for p in before.pins if p.name in chosen}
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=True), 1):
        if number not in named:
            assert old == new
    assert {c.line for c in plan.changes} <= named
    for old_pin, new_pin in zip(before.pins, after.pins, strict=True):
        assert (new_pin.name, new_pin.marker, new_pin.comment) == (
            old_pin.name,
            old_pin.marker,
            old_pin.comment,
        )
        expected = new_versions.get(old_pin.name, old_pin.version)
        assert new_pin.version == expected
        old_parts = lts.cut_line(before.lines[old_pin.line - 1].content)
        new_parts = lts.cut_line(after.lines[new_pin.line - 1].content)
        if old_parts.tail and len(new_parts.requirement) < _tail_column(old_parts):
            assert _tail_column(new_parts) == _tail_column(old_parts)  # the comment kept its column
    old_specs = [f"{p.name}=={p.version}" for p in before.pins if p.name in chosen]
    if all(
        _tail_column(lts.cut_line(after.lines[p.line - 1].content))
        == _tail_column(lts.cut_line(before.lines[p.line - 1].content))
        for p in after.pins
    ):
        assert (
            lts_edit.plan_pins(plan.new_text, lts_edit.parse_specs(old_specs), add=False).new_text
            == text
        )
