"""Whether the stored diff can hold the code that runs: a checkout is refused where git would
compare its files through attributes the diff does not carry (a repository's own
info/attributes, a .gitattributes not as committed) or where a submodule holds changes its
commit does not. A repository's own info/attributes is judged line by line as git reads it,
so that only a line that sets something is refused."""

from __future__ import annotations

import errno
import os
import re

from sacscale.git_command import (committed_attributes_files, dirty_submodules, info_attributes_path, submodules,
                                  uncommitted_attributes_files)

# pipeline outputs: evidence and logs, not code; never part of the stored diff
NOT_SOURCE = ("results", "reports", "logs", "benchmarks")

# what git takes as blanks between an attributes line's fields, and the byte-order mark it
# skips at the start of the file
_BLANKS = re.compile(rb"[ \t\r\n]+")
_BOM = b"\xef\xbb\xbf"
_MACRO = b"[attr]"
# git's own macro: a committed `binary` uses these names, which a macro of the same name redefines
_BUILT_IN_BINARY = {b"diff", b"merge", b"text"}


class CheckoutRefused(ValueError):
    """The checkout holds code its stored diff could not rebuild (the message says why)."""


class CheckoutUnreadable(OSError):
    """A file git reads to compare the checkout cannot be read here (the message says which)."""


def _pattern_and_states(line: bytes) -> tuple[bytes, list[bytes]] | None:
    """An attributes line split as git splits it: (pattern, its attribute states); None for a
    blank line or a comment. A pattern in double quotes ends at its closing quote (a backslash
    escapes the next character); one without a closing quote is taken as unquoted, as git does."""
    text = line.lstrip(b" \t\r\n")
    if not text or text.startswith(b"#"):
        return None
    quoted = re.match(rb'"((?:[^"\\]|\\.)*)"', text, re.DOTALL) if text.startswith(b'"') else None
    pattern, rest = (quoted[1], text[quoted.end():]) if quoted else (_BLANKS.split(text, 1) + [b""])[:2]
    return pattern, [s for s in _BLANKS.split(rest) if s]


def _attribute_name(state: bytes) -> bytes:
    """The attribute a state names: `name`, `-name`, `!name` or `name=value`."""
    return state.lstrip(b"-!").split(b"=", 1)[0]


def _names_used(files: list[bytes]) -> set[bytes]:
    """Every attribute or macro name the committed attributes files use (on a pattern's line or
    in a macro's definition): a macro of the same name defined elsewhere changes what they set."""
    used: set[bytes] = set()
    for path in files:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:  # a deleted or unreadable one is refused as not as committed, or read by none
            continue
        for line in data.removeprefix(_BOM).split(b"\n"):
            fields = _pattern_and_states(line)
            used.update(_attribute_name(s) for s in (fields[1] if fields else []))
    return used | (_BUILT_IN_BINARY if b"binary" in used else set())


def setting_line(data: bytes, used: set[bytes]) -> bytes | None:
    """The first line of an info/attributes file that sets, unsets or unspecifies an attribute
    of some path, as git reads the file; None when no line does. Not setting: blank lines,
    comments (after a byte-order mark too), a pattern with no attribute, a negative pattern
    (git ignores it), a macro definition whose name no committed attributes file uses (`used`).
    A macro defined here redefines the name for every attributes file of the repository."""
    for line in data.removeprefix(_BOM).split(b"\n"):
        fields = _pattern_and_states(line)
        if fields is None:
            continue
        pattern, states = fields
        if pattern.startswith(_MACRO) and len(pattern) > len(_MACRO):
            if pattern[len(_MACRO):] in used:
                return line.strip()
        elif states and not pattern.startswith(b"!"):
            return line.strip()
    return None


def _read_whole(path: bytes) -> bytes | None:
    """The file's bytes (git reads the whole file, so every line is judged); None where there is
    none; CheckoutUnreadable, naming the path as text, where the file system refuses it."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        reason = "a folder, not a file" if exc.errno == errno.EISDIR else (exc.strerror or str(exc)).lower()
        name = path.decode("utf-8", errors="backslashreplace")
        raise CheckoutUnreadable(exc.errno, f"{name}: cannot be read ({reason}); git reads the repository's own "
                                 "attributes from this file: make it a readable file or remove it") from None


def own_attributes(top: str, prefix: str = "") -> tuple[str, str, str] | None:
    """(file, whose, first setting line) of the first repository, the checkout's or a
    submodule's at any depth, whose own info/attributes sets an attribute; else None. No git
    setting turns that file off, and its lines (a clean filter, ident, working-tree-encoding, a
    macro of them) change what git compares and stores."""
    path = info_attributes_path(top)
    data = _read_whole(path)
    line = setting_line(data, _names_used(committed_attributes_files(top))) if data else None
    if line is not None:
        whose = f"submodule {prefix.rstrip('/')}'s own" if prefix else "this checkout's own"
        return os.fsdecode(path), whose, line.decode("utf-8", errors="backslashreplace")
    for sub in submodules(top):
        if found := own_attributes(os.path.join(top, sub), f"{prefix}{sub}/"):
            return found
    return None


def refuse_unrecordable(top: str) -> None:
    """CheckoutRefused when the diff would not hold the code that runs: a repository's own
    info/attributes or a .gitattributes not as committed rewrites what git compares, or a
    submodule has changes of its own. CheckoutUnreadable when an info/attributes cannot be read."""
    attributes = own_attributes(top)
    if attributes:
        raise CheckoutRefused(
            f"{attributes[0]}: sets attributes of {attributes[1]} ('{attributes[2]}'), which can filter what "
            "git compares out of the stored diff; move its lines to a committed .gitattributes or remove them")
    for name, how in uncommitted_attributes_files(top, [f":(exclude){d}" for d in NOT_SOURCE])[:1]:
        raise CheckoutRefused(
            f"{name}: a {how} .gitattributes, not as committed; its attributes can filter what git compares out of "
            "the stored diff (which would hold this file but not the change it filters); commit it or undo it")
    dirty = dirty_submodules(top)
    if dirty:
        raise CheckoutRefused(
            f"submodule {dirty[0]}: its work tree has changes (modified or new files) that its commit does not hold, "
            "and the stored diff records only its commit; commit them in the submodule (and its new commit here) "
            "or undo them")
