"""Names the file-system encoding cannot hold as text. Under a C/POSIX locale, not coerced,
with UTF-8 mode off, the encoding is ASCII: a non-ASCII name is held as undecodable bytes
(lone surrogates), which a command reported later under a wrong cause (a path "not UTF-8",
MuJoCo's TypeError). Judged here as the command will open the name: as given, joined to
the working folder, and where its links lead. A name whose bytes are not UTF-8 is its own
cause under any encoding, the locale being no part of it: no locale holds it as text, so
the cure is to rename it.

What such bytes mean depends on what the value is, so each kind has its own cause and cure:
a path a command records (a run folder, the model) is renamed; free text a record holds (a
label, a setting) is given in UTF-8; a value that is no name at all (--env, --devices, a
number) is text the command parses, typed in UTF-8. A file name no record holds (verify's
--output and --manifest) is opened by its bytes and left alone by the CLI."""

import os
import sys

CURE = ("the file-system encoding is {encoding} here (a C/POSIX locale, not coerced, with UTF-8 mode off), so "
        "this non-ASCII {what} cannot be read or written as UTF-8 (the records, MuJoCo); set PYTHONUTF8=1 or a "
        "UTF-8 locale (e.g. LC_ALL=C.UTF-8)")
NOT_UTF8 = "not valid UTF-8 (undecodable bytes in the name): the records are UTF-8; rename it"
NOT_UTF8_LABEL = "not valid UTF-8 (undecodable bytes in the text): the records are UTF-8; give it in UTF-8"
NOT_UTF8_TEXT = "not valid UTF-8 text (undecodable bytes): type it in UTF-8"


def encoding_holds_any_name() -> bool:
    return sys.getfilesystemencoding().replace("-", "").lower() == "utf8"


def _unheld(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def shown_name(text: str) -> str:
    """The name as its bytes, as the shell writes them: what is not UTF-8 as `\\xff`, the rest
    as text (`'/tmp/\\xff\\xfe'`, `'/tmp/dé'`), under any encoding (an undecodable byte is
    held as the lone surrogate U+DC00 + byte). Where the encoding is not UTF-8 a non-ASCII
    character is written as its bytes (`é` as `\\xc3\\xa9`): an ASCII stream would show the
    code point (`\\xe9`), and `$'...\\xe9...'` names another file."""
    held = os.fsencode(text).decode("utf-8", "surrogateescape")
    as_bytes = not (encoding_holds_any_name() and _utf8(getattr(sys.stderr, "encoding", None)))
    return "'" + "".join(_escaped(c, as_bytes) for c in held) + "'"


def _utf8(encoding: str | None) -> bool:
    return (encoding or "").replace("-", "").replace("_", "").lower() == "utf8"


def _not_utf8(text: str) -> bool:
    """The name's bytes are not UTF-8: no locale holds it as text, so the cure is to rename it.

What such bytes mean depends on what the value is, so each kind has its own cause and cure:
a path a command records (a run folder, the model) is renamed; free text a record holds (a
label, a setting) is given in UTF-8; a value that is no name at all (--env, --devices, a
number) is text the command parses, typed in UTF-8. A file name no record holds (verify's
--output and --manifest) is opened by its bytes and left alone by the CLI."""
    try:
        os.fsencode(text).decode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return True
    return False


def _escaped(char: str, as_bytes: bool) -> str:
    if 0xDC80 <= ord(char) <= 0xDCFF:
        return f"\\x{ord(char) - 0xDC00:02x}"
    if as_bytes and ord(char) > 0x7F:
        return "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8"))
    return "\\'" if char == "'" else repr(char)[1:-1]


def unheld_name_problem(label: str, value) -> str | None:
    """`value` itself (an option's text, a setting) holds a name the encoding cannot hold."""
    if not _unheld(str(value)):
        return None
    if encoding_holds_any_name() or _not_utf8(str(value)):
        return f"{label} {shown_name(str(value))} is {NOT_UTF8}"
    return f"{label} {shown_name(str(value))}: {CURE.format(encoding=sys.getfilesystemencoding(), what='name')}"


def unheld_text_problem(label: str, value, recorded: bool) -> str | None:
    """`value` is text, not a name: a label a record holds (`recorded`) or a value the command
    parses (--env, --devices); neither is renamed, both are given again in UTF-8."""
    if not _unheld(str(value)):
        return None
    if encoding_holds_any_name() or _not_utf8(str(value)):
        return f"{label} {shown_name(str(value))} is {NOT_UTF8_LABEL if recorded else NOT_UTF8_TEXT}"
    return f"{label} {shown_name(str(value))}: {CURE.format(encoding=sys.getfilesystemencoding(), what='text')}"


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
    if encoding_holds_any_name() or _not_utf8(absolute):
        return f"{label} {shown_name(given)} is {shown_name(absolute)} ({how}), {NOT_UTF8}"
    return (f"{label} {shown_name(given)} is {shown_name(absolute)} ({how}): "
            f"{CURE.format(encoding=sys.getfilesystemencoding(), what='name')}")


class NameNotText(OSError):
    """A name MuJoCo (or a UTF-8 record) would be handed that cannot be held as text: its
    pybind11 bindings take only encodable text, and refused it with a TypeError that named
    no cause. An OSError: the CLI prints it as one line, exit 2, as any unusable input."""


def name_as_text(label: str, value) -> str:
    """`value` as the text MuJoCo is given; NameNotText naming `label` and the cure where it
    cannot be held as text."""
    if problem := unheld_name_problem(label, value):
        raise NameNotText(problem)
    return str(value)
