"""Case names as the shells must receive them at TAB time: literal words, never code.

Repository text (a recipe's `test_case`) reaches a completion script only through here. bash
and zsh insert a completion reply as typed text, so each name is quoted for the shell (the
way `printf %q` would: control and bidi characters as `$'\\xHH'` / `$'\\uHHHH'` escapes, so
a listing on the terminal shows them instead of obeying them); one reply per line, and a
quoted word holds no raw newline. fish quotes what it inserts itself: it gets the raw names,
NUL-terminated. zsh and fish show a candidate list with the characters raw (a bidi override
would reorder the menu, fish cuts a name at a tab): a name holding a control or format
character is not offered to them. Such a name is hostile anyway; bash shows it escaped.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Iterable

# shlex's own safe set: words made only of these need no quoting in any POSIX shell.
_BARE = re.compile(r"[\w@%+=:,./-]+", re.ASCII)


def _needs_escape(char: str) -> bool:
    # Cc: C0, DEL, C1; Cf: bidi overrides/isolates, zero-width joiners; Zl/Zp: line breaks.
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")


def _ansi_c(char: str) -> str:
    if char in "\\'":
        return "\\" + char
    if not _needs_escape(char):
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shell_word(name: str) -> str:
    """`name` as one literal word for bash or zsh."""
    if _BARE.fullmatch(name):
        return name
    if any(_needs_escape(c) for c in name):
        return "$'" + "".join(_ansi_c(c) for c in name) + "'"
    return shlex.quote(name)


def typed_prefix(word: str) -> str:
    """What the user means by the word typed so far (`'a b` means `a b`), quotes removed."""
    for closing in ("", "'", '"'):
        try:
            words = shlex.split(word + closing)
        except ValueError:
            continue
        if len(words) == 1:
            return words[0]
    return word


def _displayable(name: str) -> bool:
    return not any(_needs_escape(c) for c in name)


def bash_replies(names: Iterable[str], typed: str) -> str:
    prefix = typed_prefix(typed)
    return "".join(shell_word(n) + "\n" for n in names if n.startswith(prefix))


def zsh_replies(names: Iterable[str], typed: str) -> str:
    return bash_replies(filter(_displayable, names), typed)


def fish_replies(names: Iterable[str]) -> str:
    return "".join(n + "\0" for n in names if _displayable(n))
