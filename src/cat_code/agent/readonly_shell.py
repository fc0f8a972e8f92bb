"""Which ``shell`` commands only read: what plan mode lets through to the usual rules.

`is_read_only` parses the command with `shlex` (operators split into their own tokens) and
says yes only when every simple command of it is on `READ_ONLY` and its arguments pass that
command's check. It is conservative on purpose — a false "no" costs the model a refusal
it reads, a false "yes" lets plan mode write: anything it does not understand is refused.
So: no redirection (``>``, ``>>``, ``<``, ``>&``), no background ``&``, no subshell or
command substitution (``(``, ``$(``, backticks), no newline (a second command), no
backslash (an escaped operator is a word to the shell), no
``VAR=value`` prefix, no path as the command name, and pipes or ``;``/``&&``/``||``
chains only between commands that are each on the list (``| tee``, ``| sh``, ``| xargs``
are not). Commands that can write through an option (``sed -i``, ``find -delete``,
``sort -o``, ``git -c``…) are refused with it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

#: Tokens that join simple commands; anything else made of operator characters is refused.
_JOINERS = frozenset({"|", "||", "&&", ";"})
_OPERATOR_CHARS = frozenset("();<>|&")

Check = Callable[[list[str]], bool]


def _any_arg(args: list[str], *bad: str) -> bool:
    """Whether an argument is one of ``bad`` or starts with one of them plus ``=``."""
    return any(
        a in bad or any(a.startswith(f"{b}=") for b in bad if b.startswith("--")) for a in args
    )


def _short_flag(args: list[str], letter: str) -> bool:
    """Whether a short-option cluster (``-rno``) contains ``letter``."""
    return any(a.startswith("-") and not a.startswith("--") and letter in a[1:] for a in args)


def _always(args: list[str]) -> bool:
    return True


def _find(args: list[str]) -> bool:
    writers = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0")
    return not _any_arg(args, *writers, "-fprintf", "-fls")


def _sort(args: list[str]) -> bool:
    return not (_short_flag(args, "o") or _any_arg(args, "--output", "--compress-program"))


def _rg(args: list[str]) -> bool:
    return not any(a.startswith("--pre") for a in args if not a.startswith("--pre-glob"))


def _tree(args: list[str]) -> bool:
    return not _short_flag(args, "o")


def _date(args: list[str]) -> bool:
    return not (_short_flag(args, "s") or _any_arg(args, "--set"))


def _file(args: list[str]) -> bool:
    return not (_short_flag(args, "C") or _any_arg(args, "--compile"))


def _one_operand(args: list[str]) -> bool:
    """``uniq IN OUT`` writes OUT: at most one file operand."""
    return len([a for a in args if not a.startswith("-")]) <= 1


#: A sed script command that writes or runs something: ``w``/``W`` file, ``e`` command,
#: or the ``w``/``e`` flag of ``s///``.
_SED_WRITES = re.compile(r"(^|[;{}\s\d$/!])[wWe](\s|$|/)|/[gpiImM0-9]*[we]")


def _sed(args: list[str]) -> bool:
    if any(a.startswith("--in-place") or a == "-s" for a in args) or _short_flag(args, "i"):
        return False
    if _any_arg(args, "-f", "--file") or _short_flag(args, "f"):
        return False  # the script is in a file we do not read
    return not any(_SED_WRITES.search(a) for a in args if not a.startswith("-"))


_GIT_READERS = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "blame",
        "grep",
        "shortlog",
        "describe",
        "ls-tree",
        "cat-file",
        "reflog",
    }
)


def _git(args: list[str]) -> bool:
    # A global option first (``-c core.pager=…``, ``-C``, ``--exec-path``) could run anything.
    if not args or args[0] not in _GIT_READERS:
        if args[:1] == ["branch"]:
            return all(a in ("-a", "-r", "-v", "-vv", "--list", "--all") for a in args[1:])
        return False
    if args[0] == "reflog" and len(args) > 1 and args[1] not in ("show", "--oneline"):
        return False  # reflog expire/delete write
    # --output writes a file; -O / --open-files-in-pager runs a program (git grep).
    writers = ("--output", "--ext-diff", "-o", "-O", "--open-files-in-pager")
    return not any(a.startswith(writers) for a in args[1:])


#: Commands that only read, each with the check its arguments must pass.
READ_ONLY: dict[str, Check] = {
    **dict.fromkeys(
        (
            "ls",
            "cat",
            "head",
            "tail",
            "wc",
            "grep",
            "egrep",
            "fgrep",
            "pwd",
            "echo",
            "printf",
            "which",
            "stat",
            "du",
            "df",
            "diff",
            "cmp",
            "comm",
            "cut",
            "tr",
            "nl",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "whoami",
            "id",
            "uname",
            "true",
            "false",
            "test",
            "seq",
            "md5sum",
            "sha1sum",
            "sha256sum",
            "sha512sum",
            "jq",
            "column",
            "tac",
            "rev",
            "fold",
            "od",
            "strings",
            "printenv",
            "cd",
            "type",
        ),
        _always,
    ),
    "find": _find,
    "file": _file,
    "sort": _sort,
    "rg": _rg,
    "tree": _tree,
    "date": _date,
    "uniq": _one_operand,
    "sed": _sed,
    "git": _git,
}


def _tokens(command: str) -> list[str] | None:
    """The command's tokens, quotes kept (so a quoted ``";"`` is a word, not a joiner)."""
    if any(c in command for c in "\n\r`\\") or "$(" in command:
        return None  # a second line, a substitution, an escape we would have to model
    lexer = shlex.shlex(command, posix=False, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes
        return None


def _word(token: str) -> str | None:
    """A token as the shell passes it on (quotes removed), or None when unclear."""
    try:
        parts = shlex.split(token)
    except ValueError:
        return None
    return parts[0] if len(parts) == 1 else None


def _simple_commands(tokens: list[str]) -> list[list[str]] | None:
    """The simple commands between joiners, or None when another operator is used."""
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _JOINERS:
            commands.append([])
            continue
        if set(token) <= _OPERATOR_CHARS:
            return None  # redirection, background, subshell, or an odd mix
        word = _word(token)
        if word is None:
            return None
        commands[-1].append(word)
    return commands


def is_read_only(command: str) -> bool:
    """Whether ``command`` only reads (see the module docstring); unsure means no."""
    tokens = _tokens(command)
    if not tokens:
        return False
    commands = _simple_commands(tokens)
    if commands is None or any(not words for words in commands):
        return False
    for name, *args in commands:
        check = READ_ONLY.get(name)
        if check is None or not check(args):
            return False
    return True


__all__ = ["READ_ONLY", "is_read_only"]
