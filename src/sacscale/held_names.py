"""Names the file-system encoding cannot hold as text. Under a C/POSIX locale, not coerced,
with UTF-8 mode off, the encoding is ASCII: a non-ASCII name is held as undecodable bytes
(lone surrogates), which a command reported later under a wrong cause (a path "not UTF-8",
MuJoCo's TypeError). Judged here as the command will open the name: as given, joined to
the working folder, and where its links lead. Under a UTF-8 encoding the only such names
are bytes that are not UTF-8: their own cause, the locale being no part of it."""

import os
import sys

CURE = ("the file-system encoding is {encoding} here (a C/POSIX locale, not coerced, with UTF-8 mode off), so "
        "this non-ASCII name cannot be read or written as UTF-8 (the records, MuJoCo); set PYTHONUTF8=1 or a "
        "UTF-8 locale (e.g. LC_ALL=C.UTF-8)")
NOT_UTF8 = "not valid UTF-8 (undecodable bytes in the name): the records are UTF-8; rename it"


def encoding_holds_any_name() -> bool:
    return sys.getfilesystemencoding().replace("-", "").lower() == "utf8"


def _unheld(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _shown(text: str) -> str:
    """The name as its bytes, the ones ASCII cannot hold escaped (`'/tmp/d\\xe9'`); under a
    UTF-8 encoding the undecodable bytes as the shell writes them (`'/tmp/\\xff'`)."""
    if encoding_holds_any_name():  # an undecodable byte is held as the lone surrogate U+DC00 + byte
        return "'" + "".join(_escaped(c) for c in text) + "'"
    return repr(os.fsencode(text).decode("utf-8", "backslashreplace"))


def _escaped(char: str) -> str:
    if 0xDC80 <= ord(char) <= 0xDCFF:
        return f"\\x{ord(char) - 0xDC00:02x}"
    return "\\'" if char == "'" else repr(char)[1:-1]


def unheld_name_problem(label: str, value) -> str | None:
    """`value` itself (an option's text, a setting) holds a name the encoding cannot hold."""
    if not _unheld(str(value)):
        return None
    if encoding_holds_any_name():
        return f"{label} {_shown(str(value))} is {NOT_UTF8}"
    return f"{label} {_shown(str(value))}: {CURE.format(encoding=sys.getfilesystemencoding())}"


def unheld_path_problem(label: str, value) -> str | None:
    """The path `value` names cannot be held: its text, the working folder it is joined to
    (an ASCII `results/S` in a non-ASCII folder), or the folder a link on the way leads to
    (`/tmp/asc -> /tmp/dé`); each named with the cure. A command reads the path absolute
    or resolved (verify, MuJoCo), where the unheld part came back under a wrong cause."""
    if problem := unheld_name_problem(label, value):
        return problem
    given = str(value)
    try:
        absolute = os.path.abspath(given)
        resolved = os.path.realpath(absolute)
    except (OSError, ValueError):  # no working folder (removed), a NUL: the command names it
        return None
    if _unheld(absolute):
        how = "joined to the working folder"
    elif _unheld(resolved):
        how = "where its links lead"
        absolute = resolved
    else:
        return None
    if encoding_holds_any_name():
        return f"{label} {_shown(given)} is {_shown(absolute)} ({how}), {NOT_UTF8}"
    return (f"{label} {_shown(given)} is {_shown(absolute)} ({how}): "
            f"{CURE.format(encoding=sys.getfilesystemencoding())}")
