"""Text from repository files and logs as a terminal (or a CI log viewer) may show it.

A file name, a pin, a lock entry or a log line can carry control sequences: OSC (set the
window title, hyperlinks, OSC 52 writes the clipboard), DCS, CSI (move the cursor, clear the
screen), other C0/C1 controls, and bidi controls that make a line read differently from what
it holds (Trojan Source). They are shown as visible escapes, the way git quotes file names:
ESC as `\\x1b`, U+202E as `\\u202e`. Line feeds and tabs stay (messages and diffs have lines),
and so does a CR right before a line feed (CRLF files). JSON documents are not passed here:
the JSON encoder already escapes every control character.
"""

from __future__ import annotations

import re

# C0 but tab and LF, a CR not ending a line, DEL, C1; the bidi marks, embeddings,
# overrides and isolates (U+061C, U+200E-F, U+202A-E, U+2066-9); line/paragraph separators.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
    "|\r(?!\n)"
)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """`text` with every control sequence shown, not obeyed."""
    return _UNSAFE.sub(_visible, text)
