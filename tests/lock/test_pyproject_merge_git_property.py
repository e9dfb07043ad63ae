"""Property: never worse than git. Both sides make random edits of Megatron-LM's real
pyproject.toml that touch disjoint entries (comments, blank lines, reflowed lists, new
tables, removals, changed pins); whenever git's own merge (`git merge-file`, run for real)
is clean and means the same as uvdock's structured merge, the merge gives git's bytes.
And on such disjoint edits, a clean git merge always means what the structured merge
decided (uvdock never reads a clean textual merge differently)."""

from __future__ import annotations

import subprocess
import tempfile
import tomllib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uvdock.merge.pyproject import merge_pyproject
from uvdock.merge.textual import MARKER_SIZE, Textual

REAL = (
    Path(__file__).resolve().parents[2] / "examples" / "megatron-lm" / "pyproject.toml"
).read_text(encoding="utf-8")

# Each slot touches its own entry; a side takes a slot or not, never both sides the same.
SLOTS: tuple[tuple[str, str], ...] = (
    ('    "tqdm",\n', '    "tqdm",\n    # progress bars in the new CLI\n    "rich>=13",\n'),
    ('    "wget",\n', ""),
    ('"pytest==9.1.1"', '"pytest==9.2.0"'),
    ("managed = true\n", "managed = false\n"),
    ('link-mode = "copy"\n', '# copies survive the image layers\nlink-mode = "copy"\n'),
    (
        '    "mamba-ssm",\n    "transformer-engine",\n',
        '    "mamba-ssm",\n    "flash-attn",\n    "transformer-engine",\n',
    ),
    ('batch_invariant = ["deep_gemm"]\n', 'batch_invariant = [\n    "deep_gemm",\n]\n'),
    (
        'ci = ["python-gitlab", "slack-sdk", "pandas"]\n',
        'ci = ["python-gitlab", "slack-sdk", "pandas"]\n# tools for the release job\nrelease = ["twine"]\n',
    ),
    ('    "NLP",\n', '    "NLP",\n    "megatron",\n'),
    ('    "urllib3>=2.6.3",\n', '    "urllib3>=2.6.3",\n    "protobuf<6",  # onnx export\n'),
    ('rev = "v0.3.0" }', 'rev = "v0.4.0" }'),
    ("[tool.isort]\n", '[tool.pyright]\ntypeCheckingMode = "basic"\n\n[tool.isort]\n'),
    ('profile = "black"', 'profile = "google"'),
    ('    "sphinx-copybutton",   # Adds a copy button for code blocks\n', ""),
)


def apply(slots: list[int]) -> str:
    text = REAL
    for index in slots:
        old, new = SLOTS[index]
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def git_merge(base: str, ours: str, theirs: str) -> Textual:
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            (Path(tmp) / name).write_text(text, encoding="utf-8")
            files.append(str(Path(tmp) / name))
        done = subprocess.run(
            ["git", "merge-file", "-p", "--diff3", f"--marker-size={MARKER_SIZE}", *files],
            capture_output=True,
            text=True,
            check=False,
        )
    return Textual(done.stdout, done.returncode == 0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(["none", "ours", "theirs"]), min_size=len(SLOTS), max_size=len(SLOTS))
)
def test_never_worse_than_git(choice: list[str]) -> None:
    ours = apply([i for i, side in enumerate(choice) if side == "ours"])
    theirs = apply([i for i, side in enumerate(choice) if side == "theirs"])
    textual = git_merge(REAL, ours, theirs)
    structured = merge_pyproject(REAL, ours, theirs)
    result = merge_pyproject(REAL, ours, theirs, textual)
    assert structured.conflicts == () and structured.text is not None
    assert result.text is not None
    assert tomllib.loads(result.text) == tomllib.loads(structured.text)
    if textual.clean:
        assert tomllib.loads(textual.text) == tomllib.loads(structured.text)
        assert result.text == textual.text
        assert result.via == "git"
