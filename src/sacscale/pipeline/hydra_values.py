"""A Hydra override's value read as Hydra's override grammar reads it, far enough to find
every number in it: a sweep `a,b` of elements; lists `[...]`, dicts `{k: v}` and calls
`name(x=v)` whose brackets pair; backslash escapes (`\\(` is a plain `(`); quoted strings,
in which a backslash escapes the quote. No Hydra import: planning runs without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

_PAIRS = {"(": ")", "[": "]", "{": "}"}
_CLOSING = {v: k for k, v in _PAIRS.items()}
# Hydra's escapes in a value: a backslash before one of these is the character itself
_ESCAPED = "\\()[]{}:=, \t"


class HydraValueError(ValueError):
    """A value Hydra's override grammar would refuse (a bracket or quote that does not pair)."""


@dataclass
class _Group:
    """A bracketed part (`opener` "" for the whole value): its items, each a list of parts:
    text characters, separators (':' and '='), quoted strings and nested groups."""
    opener: str
    at: int
    items: list = field(default_factory=lambda: [[]])


@dataclass
class _Quoted:
    text: str


@dataclass
class _Separator:
    char: str


def parse(text: str) -> _Group:
    """`text` as a tree of groups; HydraValueError where a bracket or quote does not pair."""
    stack, i = [_Group("", 0)], 0
    while i < len(text):
        char, item = text[i], stack[-1].items[-1]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPED:
            item.append(text[i + 1])
            i += 2
            continue
        if char in "'\"":
            quoted, i = _quoted(text, i)
            item.append(quoted)
            continue
        if char in _PAIRS:
            stack.append(_Group(char, i))
            item.append(stack[-1])
        elif char in _CLOSING:
            if stack[-1].opener != _CLOSING[char]:
                raise HydraValueError(_unpaired(char, i, stack[-1]))
            stack.pop()
        elif char == ",":
            stack[-1].items.append([])
        elif char in ":=":
            item.append(_Separator(char))
        else:
            item.append(char)
        i += 1
    if len(stack) > 1:
        raise HydraValueError(f"the {stack[-1].opener!r} at character {stack[-1].at + 1} is never closed")
    return stack[0]


def _unpaired(char: str, at: int, open_group: _Group) -> str:
    if not open_group.opener:
        return f"the {char!r} at character {at + 1} closes no bracket"
    return f"the {char!r} at character {at + 1} closes the {open_group.opener!r} at character {open_group.at + 1}"


def _quoted(text: str, start: int) -> tuple[_Quoted, int]:
    """The quoted string opening at `start` (a backslash escapes the next character) and the
    index after its closing quote."""
    quote, chars, i = text[start], [], start + 1
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            chars.append(text[i + 1])
            i += 2
        elif text[i] == quote:
            return _Quoted("".join(chars)), i + 1
        else:
            chars.append(text[i])
            i += 1
    raise HydraValueError(f"the quote {quote} at character {start + 1} is never closed")


def holds_non_finite(text: str) -> bool:
    """Whether the value `text` holds a number, as Hydra reads one, that is not finite
    (inf, nan, 1e400; also quoted, which a float setting takes as a number). Raises
    HydraValueError for a value whose brackets or quotes do not pair."""
    return _group_non_finite(parse(text))


def _group_non_finite(group: _Group) -> bool:
    # a dict item is key: value, a call's argument name=value; a list's `a:b` is one string
    splits = {"{": ":", "(": "="}.get(group.opener, "")
    return any(_item_non_finite(item, splits) for item in group.items)


def _item_non_finite(parts: list, splits: str) -> bool:
    words, word = [], []
    for part in parts:
        if isinstance(part, _Group):
            if _group_non_finite(part):
                return True
        elif isinstance(part, _Quoted):
            if _quoted_non_finite(part.text):
                return True
        elif isinstance(part, _Separator) and part.char in splits:
            words.append("".join(word))
            word = []
        else:
            word.append(part if isinstance(part, str) else part.char)
    return any(_number_non_finite(w) for w in [*words, "".join(word)])


def _quoted_non_finite(text: str) -> bool:
    """A quoted string: a number in it ('1e400'), or in the value it spells ('[1, inf]')."""
    try:
        return holds_non_finite(text)
    except HydraValueError:  # a string such as 'a(b' is no value of its own
        return _number_non_finite(text)


def _number_non_finite(word: str) -> bool:
    try:
        return not math.isfinite(float(word.strip()))
    except ValueError:
        return False
