"""Shell completion as text: the bash, zsh and fish scripts, written from the command shapes
commands/completion.py reads from the CLI's own parsers, and the case names asked at TAB time.

Repository text (a recipe's `test_case`) reaches a shell only as a literal word. bash and zsh
insert a reply as typed text, so each name is quoted as `printf %q` would (control and bidi
characters as `$'\\xHH'` escapes), one a line; fish quotes what it inserts, so it gets raw
names, NUL-terminated. zsh and fish list candidates raw, so a name holding a control or format
character is offered to bash only."""

from __future__ import annotations

import shlex
import unicodedata
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from uvdock.cli.spec import command_groups


class Option(NamedTuple):
    flags: tuple[str, ...]
    help: str
    takes_value: bool
    choices: tuple[str, ...]


class CommandShape(NamedTuple):
    group: str
    name: str
    help: str
    options: tuple[Option, ...]
    completes_cases: bool
    words: tuple[str, ...] = ()  # the choices of a positional argument (completion's shells)


def _flags(options: Sequence[Option]) -> str:
    return " ".join(flag for option in options for flag in option.flags)


def _value_cases(options: Sequence[Option], command: str | None = None) -> list[str]:
    """Case arms on "$group/$sub $prev": a command's own options first (`--format` takes
    text|markdown in lock diff but text|github|gitlab in image check), then the global ones
    (`command` None), which hold after any command."""
    lines = []
    for option in (o for o in options if o.takes_value):
        words = " ".join(option.choices)
        action = f'COMPREPLY=($(compgen -W "{words}" -- "$cur"))' if words else "_uvdock_files"
        arms = "|".join(f'*" {f}"' if command is None else f'"{command} {f}"' for f in option.flags)
        lines.append(f"        {arms}) {action}; return;;")
    return lines


_BASH = """# uvdock completion for bash: source <(uvdock completion bash)
# File names are repository text too: each is one literal reply (no word splitting or glob
# of $(...) output), quoted by the shell when inserted.
_uvdock_files() {{
    local file
    COMPREPLY=()
    while IFS= read -r file; do
        COMPREPLY+=("$file")
    done < <(compgen -f -- "$cur")
    type compopt >/dev/null 2>&1 && compopt -o filenames 2>/dev/null
    return 0
}}
_uvdock() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
    local group="" sub="" subs="" opts="" words="" cases=0 i word repo=()
    local globals="{globals}"
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${{COMP_WORDS[i]}}
        # Case names are the repository's that --repo names, as the command will read them.
        [[ $word == --repo && $((i + 1)) -lt $COMP_CWORD ]] && repo=(--repo "${{COMP_WORDS[i+1]}}")
        [[ $word == --repo=* ]] && repo=(--repo "${{word#--repo=}}")
        case " {valued} " in *" $word "*) ((i++)); continue;; esac
        [[ $word == -* ]] && continue
        if [[ -z $group ]]; then
            group=$word
            case $group in
{subs}
            esac
        elif [[ -z $sub && " $subs " == *" $word "* ]]; then
            sub=$word
        fi
    done
    case "$group/$sub $prev" in
{values}
    esac
    if [[ -z $group ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$globals --version --help" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "{groups} help" -- "$cur"))
        fi
        return
    fi
    if [[ $group == help ]]; then
        COMPREPLY=($(compgen -W "{groups}" -- "$cur"))
        return
    fi
    case "$group/$sub" in
{per_command}
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts $globals" -- "$cur"))
    elif [[ -n $subs && -z $sub ]]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    elif [[ -n $words ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    elif ((cases)); then
        # Case names come from the repository: uvdock answers with quoted literal words, one a
        # line, and each line is taken as it is (compgen -W would expand $(...) in them).
        COMPREPLY=()
        while IFS= read -r word; do
            COMPREPLY+=("$word")
        done < <(uvdock "${{repo[@]}}" completion {shell} --list-cases --prefix="$cur" 2>/dev/null)
    else
        _uvdock_files
    fi
}}
complete -F _uvdock uvdock
"""


def bash(shapes: Sequence[CommandShape], globals_: Sequence[Option], shell: str = "bash") -> str:
    groups = command_groups()
    all_options = [*globals_, *(o for s in shapes for o in s.options)]
    own = [line for s in shapes for line in _value_cases(s.options, f"{s.group}/{s.name}")]
    return _BASH.format(
        globals=_flags(globals_),
        valued=" ".join(sorted({f for o in all_options if o.takes_value for f in o.flags})),
        subs="\n".join(
            f'        {group}) subs="{" ".join(n for n in names if n)}";;'
            for group, names in groups.items()
        ),
        values="\n".join(dict.fromkeys([*own, *_value_cases(globals_)])),
        groups=" ".join(groups),
        per_command="\n".join(
            f'        "{s.group}/{s.name}") opts="{_flags(s.options)}"; '
            f'words="{" ".join(s.words)}"; cases={int(s.completes_cases)};;'
            for s in shapes
        ),
        shell=shell,
    )


def zsh(shapes: Sequence[CommandShape], globals_: Sequence[Option]) -> str:
    # zsh runs the bash function through bashcompinit: one generated logic for both shells.
    return (
        "#compdef uvdock\n# uvdock completion for zsh: uvdock completion zsh > ~/.zfunc/_uvdock\n"
        "autoload -U +X bashcompinit && bashcompinit\n"
        + bash(shapes, globals_, "zsh").split("\n", 1)[1]
    )


def _fish_option(option: Option, condition: str) -> str:
    where = [f"-n {shlex.quote(condition)}"] if condition else []
    flags = [f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}" for f in option.flags]
    values = ["-r"] if option.takes_value else []
    if option.choices:
        values = [f"-x -a {shlex.quote(' '.join(option.choices))}"]
    help = f"-d {shlex.quote(option.help)}"
    return " ".join(["complete -c uvdock", *where, *flags, *values, help])


# Case names are the repository's that --repo names (raw, NUL-terminated: fish quotes what
# it inserts and never evaluates it).
_FISH_HEAD = """# uvdock completion for fish: uvdock completion fish | source
complete -c uvdock -f
function __uvdock_cases
    set -l tokens (commandline -opc)
    set -l repo
    for i in (seq (count $tokens))
        if test "$tokens[$i]" = --repo; and test $i -lt (count $tokens)
            set repo --repo $tokens[(math $i + 1)]
        else if string match -q -- '--repo=*' $tokens[$i]
            set repo --repo (string replace -- '--repo=' '' $tokens[$i])
        end
    end
    uvdock $repo completion fish --list-cases 2>/dev/null | string split0
end"""


def fish(shapes: Sequence[CommandShape], globals_: Sequence[Option]) -> str:
    groups = command_groups()
    lines = [_FISH_HEAD, *(_fish_option(option, "") for option in globals_)]
    top = [(s.group, s.help) for s in shapes if not s.name]
    top += [(g, f"{g} commands") for g, names in groups.items() if "" not in names]
    top.append(("help", "the help of a command"))
    lines += [
        f"complete -c uvdock -n __fish_use_subcommand -a {g} -d {shlex.quote(h)}" for g, h in top
    ]
    for shape in shapes:
        siblings = " ".join(n for n in groups[shape.group] if n)
        seen = f"__fish_seen_subcommand_from {shape.group}"
        # Before a subcommand is typed: the group's own options, or its subcommands' names.
        condition = f"{seen}; and not __fish_seen_subcommand_from {siblings}" if siblings else seen
        if shape.name:
            lines.append(_fish_words(condition, shape.name, shape.help))
            condition = f"{seen}; and __fish_seen_subcommand_from {shape.name}"
        lines += [_fish_option(option, condition) for option in shape.options]
        if shape.words:
            lines.append(_fish_words(condition, " ".join(shape.words)))
        if shape.completes_cases:
            lines.append(_fish_words(condition, "(__uvdock_cases)"))
    return "\n".join(lines) + "\n"


def _fish_words(condition: str, words: str, help: str = "") -> str:
    described = f" -d {shlex.quote(help)}" if help else ""
    return f"complete -c uvdock -n {shlex.quote(condition)} -a {shlex.quote(words)}{described}"


SCRIPTS = {"bash": bash, "zsh": zsh, "fish": fish}


def _needs_escape(char: str) -> bool:
    # Cc: C0, DEL, C1; Cf: bidi overrides/isolates, zero-width joiners; Zl/Zp: line breaks.
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")


def _ansi_c(char: str) -> str:
    if char in "\\'":
        return "\\" + char
    if not _needs_escape(char):
        return char
    code = ord(char)
    width, letter = (2, "x") if code < 0x100 else (4, "u") if code < 0x10000 else (8, "U")
    return f"\\{letter}{code:0{width}x}"


def shell_word(name: str) -> str:
    """`name` as one literal word for bash or zsh (bare when shlex's safe set covers it)."""
    if _displayable(name):
        return shlex.quote(name)
    return "$'" + "".join(map(_ansi_c, name)) + "'"


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
    return not any(map(_needs_escape, name))


def replies(shell: str | None, names: Iterable[str], typed: str) -> str:
    """The case names that start with the typed word, as `shell` reads them (None: plain
    lines, quoted like bash's, for people and older scripts)."""
    if shell == "fish":
        return "".join(n + "\0" for n in names if _displayable(n))
    if shell == "zsh":
        names = filter(_displayable, names)
    prefix = typed_prefix(typed) if shell else ""
    return "".join(shell_word(n) + "\n" for n in names if n.startswith(prefix))
