"""Glob patterns matched in linear time, for the glob tool and grep's ``glob`` filter.

A glob from the model must not be able to stall a search: translated to a backtracking
regex, ``*a*a*a*a*a*a*b`` took 18 s on one 90-character name. Here a pattern is parsed
into tokens and matched by simulating its automaton over the path, one character at a
time, with the set of positions the pattern may be at: at most (characters × tokens)
steps, whatever the pattern. The syntax: ``**/`` any folders (or none), ``**`` anything,
``*`` and ``?`` within one name, ``[...]`` a class (``[!...]``/``[^...]`` negated, ranges
``a-z``), ``{a,b}`` alternatives (expanded first, at most `MAX_ALTERNATIVES`). A bad
pattern (a reversed range ``[z-a]``, too many alternatives) raises `GlobError` with what is
wrong, for the tool to show as its error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

#: ``{a,b}{c,d}…`` expands multiplicatively: a pattern may not name more alternatives.
MAX_ALTERNATIVES = 256
#: Longer patterns are refused: nobody writes one, and each token costs every character.
MAX_PATTERN_CHARS = 1_000


class GlobError(ValueError):
    """A glob pattern that cannot be used (``pattern`` as given, ``reason`` what is wrong)."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"bad glob pattern {pattern[:200]!r}: {reason}")
        self.pattern = pattern
        self.reason = reason


class _Kind(Enum):
    CHAR = "char"  # one given character
    ONE = "one"  # ``?``: any character but ``/``
    CLASS = "class"  # ``[...]``: one character of (or, negated, not of) the class, not ``/``
    STAR = "star"  # ``*``: any run of characters without ``/``
    ANY = "any"  # ``**``: any run of characters
    FOLDERS = "folders"  # ``**/``: nothing, or any run of characters ending in ``/``


@dataclass(frozen=True, slots=True)
class _Token:
    kind: _Kind
    char: str = ""
    ranges: tuple[tuple[str, str], ...] = ()
    negated: bool = False

    def takes(self, char: str) -> bool:
        """Whether this one-character token accepts ``char``."""
        if self.kind is _Kind.CHAR:
            return char == self.char
        if char == "/":
            return False
        if self.kind is _Kind.ONE:
            return True
        inside = any(low <= char <= high for low, high in self.ranges)
        return inside is not self.negated


_REPEATING = (_Kind.STAR, _Kind.ANY, _Kind.FOLDERS)


@dataclass(frozen=True, slots=True)
class Glob:
    """A compiled glob: `match` a relative ``/`` path (the whole of it)."""

    pattern: str
    alternatives: tuple[tuple[_Token, ...], ...]

    def match(self, path: str) -> bool:
        return any(_run(tokens, path) for tokens in self.alternatives)


def compile_glob(pattern: str) -> Glob:
    """Parse ``pattern``; raises `GlobError` saying what is wrong with it."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise GlobError(pattern, f"longer than {MAX_PATTERN_CHARS:,} characters")
    return Glob(pattern, tuple(dict.fromkeys(_expand(pattern, pattern))))


def git_glob_filter(glob: str) -> Callable[[str], bool]:
    """Whether a relative ``/`` path passes ``glob`` by ripgrep's (git's) rules: a glob
    without ``/`` (but a last one) matches a name at any depth, one with ``/`` is anchored at
    the folder searched; a path passes when it, or a folder above it, matches (``build/``
    folders only)."""
    folders_only = glob.endswith("/")
    body = glob.rstrip("/")
    anchored = "/" in body
    compiled = compile_glob(body.lstrip("/") if anchored else f"**/{body}")

    def wanted(path: str) -> bool:
        parts = path.split("/")
        upto = len(parts) - 1 if folders_only else len(parts)
        return any(compiled.match("/".join(parts[:k])) for k in range(1, upto + 1))

    return wanted


def _expand(text: str, pattern: str) -> list[tuple[_Token, ...]]:
    """The token sequences of ``text``, one per alternative: each ``{…}`` group expanded,
    recursively, its options tokenized apart (``{x,*}*`` is ``x*`` or ``*`` then ``*``, never
    ``**``); a ``{`` without its ``}`` is a plain character."""
    start = text.find("{")
    while start != -1:
        end, commas = _group(text, start)
        if end is not None:
            head, tail = _tokens(text[:start], pattern), _expand(text[end + 1 :], pattern)
            bounds = [start, *commas, end]
            out: list[tuple[_Token, ...]] = []
            for i in range(len(bounds) - 1):
                for option in _expand(text[bounds[i] + 1 : bounds[i + 1]], pattern):
                    out.extend(head + option + rest for rest in tail)
                    if len(out) > MAX_ALTERNATIVES:
                        raise GlobError(pattern, f"more than {MAX_ALTERNATIVES} {{…}} alternatives")
            return out
        start = text.find("{", start + 1)
    return [_tokens(text, pattern)]


def _group(text: str, start: int) -> tuple[int | None, list[int]]:
    """The ``}`` closing the ``{`` at ``start`` and the top-level commas inside."""
    depth = 0
    commas: list[int] = []
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i, commas
        elif text[i] == "," and depth == 1:
            commas.append(i)
    return None, []


def _tokens(text: str, pattern: str) -> tuple[_Token, ...]:
    out: list[_Token] = []
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            token, i = _Token(_Kind.FOLDERS), i + 3
        elif text.startswith("**", i):
            token, i = _Token(_Kind.ANY), i + 2
        elif text[i] == "*":
            token, i = _Token(_Kind.STAR), i + 1
        elif text[i] == "?":
            token, i = _Token(_Kind.ONE), i + 1
        elif text[i] == "[" and (parsed := _class(text, i, pattern)) is not None:
            token, i = parsed
        else:
            token, i = _Token(_Kind.CHAR, text[i]), i + 1
        if token.kind is _Kind.STAR and out and out[-1].kind in (_Kind.STAR, _Kind.ANY):
            continue  # ``**`` then ``*``, or ``*`` twice: the same language, fewer states
        out.append(token)
    return tuple(out)


def _class(text: str, start: int, pattern: str) -> tuple[_Token, int] | None:
    """The ``[...]`` class at ``start`` and where it ends (None: no ``]``, a plain ``[``)."""
    i = start + 1
    negated = text[i : i + 1] in ("!", "^")
    i += negated
    first = i
    while i < len(text) and (text[i] != "]" or i == first):
        i += 1
    if i >= len(text):
        return None
    body, ranges = text[first:i], []
    j = 0
    while j < len(body):
        if j + 2 < len(body) and body[j + 1] == "-":
            low, high = body[j], body[j + 2]
            if low > high:
                raise GlobError(pattern, f"the range {low}-{high} in [{body}] is reversed")
            ranges.append((low, high))
            j += 3
        else:
            ranges.append((body[j], body[j]))
            j += 1
    return _Token(_Kind.CLASS, ranges=tuple(ranges), negated=negated), i + 1


def _run(tokens: tuple[_Token, ...], path: str) -> bool:
    """Simulate the pattern's automaton over ``path``. A state is a token index (the
    pattern has matched everything before it); ``-1 - i`` is "inside ``**/`` at i", which
    must see a ``/`` before going on."""
    end = len(tokens)
    states = _closure(tokens, {0})
    for char in path:
        following: set[int] = set()
        for state in states:
            if state < 0:  # inside **/: anything, and a "/" may end it
                following.add(state)
                if char == "/":
                    following.add(-1 - state + 1)
                continue
            if state == end:
                continue
            token = tokens[state]
            if token.kind is _Kind.FOLDERS:
                following.add(-1 - state)
                if char == "/":
                    following.add(state + 1)
            elif token.kind is _Kind.ANY or (token.kind is _Kind.STAR and char != "/"):
                following.add(state)
            elif token.kind not in _REPEATING and token.takes(char):
                following.add(state + 1)
        if not following:
            return False
        states = _closure(tokens, following)
    return end in states


def _closure(tokens: tuple[_Token, ...], states: set[int]) -> set[int]:
    """``states`` and every state reached from them without a character (a repeating token
    matched zero times)."""
    out, stack = set(states), list(states)
    while stack:
        state = stack.pop()
        if 0 <= state < len(tokens) and tokens[state].kind in _REPEATING and state + 1 not in out:
            out.add(state + 1)
            stack.append(state + 1)
    return out


__all__ = ["MAX_ALTERNATIVES", "Glob", "GlobError", "compile_glob", "git_glob_filter"]
