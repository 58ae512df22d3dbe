"""What `reference-env --create --requirements FILE` hands pip, judged before pip starts.

pip installs as this user whatever the requirements file names, and builds a local project
by running its code (setup.py, a build backend): a file another user owns or may change, or
a local thing it names that is hers, had her code run as this user (as root, root's). So
the file is judged as other code inputs are (sacscale.atomic: its owner, who may write it,
the folders above it, links on the way), and so is each local thing it names, read as pip
reads the file (decoded as pip decodes it, or refused; `\\` continues a line, `#` starts a
comment, `${VAR}` is the environment's; a requirement taken as written, never split into words):
nested `-r`/`-c` files (relative to the file naming them), `-e PATH`, `-f`/`--find-links`
folders, `file:` URLs (also `git+file:`, `name @ file:...`, index URLs; the scheme in any
case), the path of a direct reference (`name @ /x/pkg`, which pip refuses), and path
requirements (`./pkg`, `/x/pkg`, an archive by pip's suffixes in any case, `PKG.TAR.GZ`, and
any other requirement that names a file or folder there; relative to the working folder, and
to the file's folder where one is there). A folder is judged with everything under it, since pip
builds from all of it (a link in it by its owner and where it leads: its own mode bits are
no permission); a remote requirement (a name, an https URL) is the index's. Options
are read as pip's parser reads them (commands._pip_options): `--edit X` is `--editable X`,
`--constr=F` is `--constraint F`; one pip does not know, or the start of several, is refused.
A line holding a NUL byte (a file of NUL-ended entries, /proc/self/environ; a `%00` in a
`file:` URL) is refused before any path is made of it: pip would fail on it after making the
environment.
"""

from __future__ import annotations

import codecs
import os
import re
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sacscale.atomic import file_kind, others_can_write_file
from sacscale.commands._pip_options import (LOCAL_THING, LONG_OPTIONS, NESTED_FILE, UnreadOption, break_line,
                                            option_values)
from sacscale.pipeline.code_paths_env import code_path_problem
from sacscale.pipeline.plan_values import shown_path

FILE_MAX_BYTES = 1024 * 1024  # a requirements file is a few lines; a larger one is not read
TREE_MAX_ENTRIES = 100_000  # a project pip builds; a folder of more entries is not judged
# pip reads -r/-c files nested without end; past a few dozen no one meant it, and the chain is not judged
NESTING_MAX = 32
# pip's own list (pip._internal.utils.filetypes.ARCHIVE_EXTENSIONS, pip 26.3), which its
# is_archive_file compares lowercased: EVIL-1.0.TAR.GZ is an archive to it too
ARCHIVES = (".zip", ".whl", ".tar.bz2", ".tbz", ".tar.gz", ".tgz", ".tar", ".tar.xz", ".txz", ".tlz", ".tar.lz",
            ".tar.lzma")
_VARIABLE = re.compile(r"(\$\{([A-Z0-9_]+)\})")  # the only form pip expands
_COMMENT = re.compile(r"(^|\s+)#.*$")
# file:///x, git+file:///x; a URL's scheme in any case (FILE:///x), as urlsplit reads it
_FILE_URL = re.compile(r"(?:[A-Za-z]+\+)?file:\S*", re.IGNORECASE)
# PEP 508's `name[extras] @ reference`: the reference, a URL or (refused by pip, judged all the same) a path
_DIRECT_REFERENCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@\s*(\S+)")
_EXTRAS = re.compile(r"\[[^\]]+\]$")  # ./pkg[extra]: the path is ./pkg
# how pip decodes a requirements file: a byte order mark (UTF-32's before UTF-16's, whose
# marks start theirs), else a `coding:` comment on one of the first two lines, else UTF-8
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF32, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF16, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"))
_DECLARED = re.compile(rb"coding[:=]\s*([-\w.]+)")
# a NUL byte: pip fails on such a line only after the environment is made; a path holding one
# cannot even be looked at (the file system refuses it in a name)
NUL_TAIL = "pip would fail on the line, after making the environment: is this a requirements file? Remove the byte"


class _TooDeep(Exception):
    """Nested requirements files deeper than NESTING_MAX, at the file given."""


class _Undecodable(ValueError):
    """A requirements file pip cannot decode, as a phrase after its name."""


def requirements_problem(path: str) -> str | None:
    """Why pip installing from the requirements file `path` could run another user's code,
    as one line naming the file (and the line) and the problem; None when it could not."""
    try:
        return _file_problem(Path(os.path.abspath(path)), set(), 0)
    except _TooDeep as deep:
        return (f"{shown_path(os.path.abspath(path))} names requirements files (-r/-c) nested more than {NESTING_MAX} "
                f"deep (the deepest reached: {shown_path(deep.args[0])}), more than are judged here: name "
                "fewer levels of files")


def kind_problem(path: str | Path) -> str | None:
    """Why `path` is no requirements file pip can read, as a phrase after its name: nothing
    there, or a folder, FIFO, device or socket named as what it is (only looked at: opening
    a FIFO would wait for a writer); None for a plain file."""
    kind = file_kind(path)
    if kind is None:
        return "no such file"
    if kind != "a plain file":
        return f"is {kind}, not a file of requirements pip can read: name a requirements file"
    return None


def _file_problem(path: Path, seen: set[Path], depth: int) -> str | None:
    if depth > NESTING_MAX:
        raise _TooDeep(path)
    if problem := _judged_file(path):
        return f"{shown_path(path)} {problem}; pip installs what it names as this user, so that user's code " \
               "could run as this user: name a requirements file of your own"
    if problem := kind_problem(path):
        return f"{shown_path(path)}: {problem}"
    if path.resolve() in seen:
        return None  # a file named twice (or naming itself) is read once
    seen.add(path.resolve())
    try:
        lines = list(_lines(path))
    except OSError as exc:
        return f"{shown_path(path)} cannot be read ({exc.strerror})"
    except _Undecodable as exc:
        return f"{shown_path(path)} {exc}, so pip cannot read it: save it as UTF-8"
    for number, line in lines:
        if found := _line_problem(line, path.parent, seen, depth):
            return f"{shown_path(path)} line {number}: {found}"
    return None


def _line_problem(line: str, here: Path, seen: set[Path], depth: int) -> str | None:
    if "\0" in line:  # judged before any path is made of it
        return f"holds a NUL byte (\\x00), which no requirement or path can hold; {NUL_TAIL}"
    try:
        for nested, target in _named(line, here):
            if "\0" in str(target):  # a file: URL's %00
                return f"names {shown_path(target)}, a path with a NUL byte (%00), which no path can hold; {NUL_TAIL}"
            if nested:
                found = _file_problem(target, seen, depth + 1)
            else:
                found = _thing_problem(target)
                found = found and (f"{shown_path(target)} {found}; pip would install it as this user, running its "
                                   "build code, so that user's code could run as this user: name one of your own")
            if found:
                return found
    except UnreadOption as exc:
        return str(exc)
    return None


def _judged_file(path: Path) -> str | None:
    """Why another user could change the file at `path`, or None (also where it is no plain file)."""
    if problem := code_path_problem(str(path)):  # links, the folders above, its owner
        return problem
    try:
        st = path.stat()
    except OSError:
        return None  # kind_problem names what is (not) there
    if not stat.S_ISREG(st.st_mode):
        return None
    if st.st_size > FILE_MAX_BYTES:
        return f"is larger than {FILE_MAX_BYTES} bytes, so it is not read (what it names cannot be judged)"
    return others_can_write_file(st, str(path))


def _thing_problem(path: Path) -> str | None:
    """Why another user could change a local thing pip installs from (a project folder, an
    archive, a folder of archives), or None; one not there is judged where it would be made."""
    if problem := code_path_problem(str(path)):
        return problem
    if not path.is_dir():
        return others_can_write_file(path.stat(), str(path)) if path.exists() else None
    for count, entry in enumerate(_tree(path), start=1):
        if count > TREE_MAX_ENTRIES:
            return f"holds more than {TREE_MAX_ENTRIES} entries, more than are judged here"
        if problem := _entry_problem(entry):
            return f"holds {shown_path(entry)}, which {problem}"
    return None


def _entry_problem(entry: str) -> str | None:
    """Why another user could change the entry `entry` of a project, or what pip reads through it."""
    st = os.lstat(entry)
    if not stat.S_ISLNK(st.st_mode):
        return others_can_write_file(st, entry)
    # a link's mode bits are no permission (always 0777): it is replaced, not written, so
    # its owner and its folder (judged as an entry too) say who may change it; what pip
    # reads through it is judged where it leads, and by the links on the way there
    if st.st_uid not in (os.getuid(), 0):
        return f"is a link that belongs to uid {st.st_uid}, another user"
    target = os.path.realpath(entry)
    if problem := code_path_problem(target):
        return f"leads to {shown_path(target)}, which {problem}"
    return code_path_problem(entry)


def _tree(top: Path) -> Iterator[str]:
    """Every entry under `top` (links as themselves, not followed)."""
    for folder, folders, files in os.walk(top):
        for name in sorted(folders) + sorted(files):
            yield os.path.join(folder, name)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(first line number, text) of each logical line, as pip joins, strips and expands them:
    a line ending in `\\` continues on the next unless it starts as a comment; comments go
    after joining; `${VAR}` is the environment's where set and not empty."""
    joined = _joined(enumerate(_decoded(path.read_bytes()).splitlines(), start=1))
    for number, raw in joined:
        if line := _COMMENT.sub("", raw).strip():
            yield number, _expanded(line)


def _joined(numbered: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    pending: list[str] = []
    start = 0
    for number, raw in numbered:
        starts_as_comment = _COMMENT.match(raw) is not None
        if raw.endswith("\\") and not starts_as_comment:
            start = start if pending else number
            pending.append(raw.strip("\\"))
            continue
        raw = " " + raw if starts_as_comment else raw  # so that it is stripped as a comment once joined
        yield (start, "".join([*pending, raw])) if pending else (number, raw)
        pending = []
    if pending:
        yield start, "".join(pending)


def _decoded(data: bytes) -> str:
    """The text of a requirements file's bytes as pip decodes them; raises _Undecodable where
    pip could not (pip would then guess the locale's encoding, or fail with a traceback)."""
    skip, encoding = next(((len(bom), name) for bom, name in _BOMS if data.startswith(bom)), (0, None))
    declared = (_DECLARED.search(line) for line in data.split(b"\n")[:2] if line.startswith(b"#"))
    if encoding is None and (found := next((match for match in declared if match), None)):
        encoding = found.group(1).decode("ascii")
    try:
        return data[skip:].decode(encoding or "utf-8")
    except LookupError:
        raise _Undecodable(f"declares the encoding {encoding!r}, which Python does not know") from None
    except UnicodeDecodeError as exc:
        raise _Undecodable(f"is not valid {exc.encoding} text (byte {data[skip + exc.start]:#04x} at offset "
                           f"{skip + exc.start})") from None


def _expanded(line: str) -> str:
    for variable, name in _VARIABLE.findall(line):
        if value := os.environ.get(name):
            line = line.replace(variable, value)
    return line


def _named(line: str, here: Path) -> Iterator[tuple[bool, Path]]:
    """(is a requirements file, path) for each local thing `line` names: the requirement's,
    then each option's as pip resolves it (`--edit X` is `--editable X`); raises
    UnreadOption at an option pip would refuse."""
    requirement, options = break_line(line)
    if requirement:  # pip splits the options part into words, never the requirement
        yield from ((False, local) for local in _requirement_paths(requirement, here))
    for option, value in option_values(_words(options)):
        if LONG_OPTIONS[option] == NESTED_FILE:
            if local := _local(value, here, nested=True):
                yield True, local
        elif LONG_OPTIONS[option] == LOCAL_THING:
            yield from ((False, local) for local in _locals(value, here))


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:  # an unclosed quote: pip refuses the line; its words at blanks are judged
        return text.split()


def _requirement_paths(requirement: str, here: Path) -> list[Path]:
    """The local paths a requirement (a line's text before its options, as written) names,
    read as pip reads it: its markers cut at `; ` (a URL) or `;` (anything else: both
    readings are judged), then a `file:` URL anywhere (`name @ file:///x`, `git+file:///x`,
    in any case), the path of a direct reference (`name @ /x`), or the text itself where pip
    takes it as a path (`./mine/p\\kg` is that folder, backslash and all)."""
    names = {requirement.split(marker_start, 1)[0].strip() for marker_start in ("; ", ";")}
    return [local for name in sorted(names) if name for local in _name_paths(name, here)]


def _name_paths(name: str, here: Path) -> list[Path]:
    if _FILE_URL.match(name):  # the whole text a URL, spaces and all
        return _locals(name, here)
    if urls := _FILE_URL.findall(name):
        return [local for url in urls for local in _locals(url, here)]
    if direct := _DIRECT_REFERENCE.match(name):  # `x[extra] @ /x/pkg`: a path as a file: URL's
        return _locals(direct.group(1), here)
    path = _EXTRAS.sub("", name)
    if os.sep in path or path.startswith(".") or path.lower().endswith(ARCHIVES):
        return _locals(path, here)
    # any other text that names something there is judged too, whatever its name: a rule
    # that guesses which names pip takes as paths is one pip's next version may widen
    return [local for local in _locals(path, here) if os.path.lexists(local)]


def _locals(value: str, here: Path) -> list[Path]:
    """The local paths `value` (a path, or a `file:`/`VCS+file:` URL) may name: a relative
    one from the working folder and, where one is there, from the file's folder."""
    local = _local(value, here)
    if local is None:
        return []
    if os.path.isabs(_path_text(value) or ""):
        return [local]
    return [Path(os.path.abspath(_path_text(value)))] + ([local] if local.exists() else [])


def _local(value: str, here: Path, nested: bool = False) -> Path | None:
    """The path `value` names, a relative one from `here` (pip reads a nested file so;
    None for a remote URL)."""
    text = _path_text(value)
    if not text:
        return None
    return Path(os.path.abspath(os.path.join(here, text) if nested or not os.path.isabs(text) else text))


def _path_text(value: str) -> str | None:
    """The path in `value`: itself, or a `file:` URL's (`git+file:///x@v1#egg=y` gives /x)."""
    if "://" in value or value.lower().startswith("file:") or "+file:" in value.lower():
        scheme, _, rest = value.partition(":")
        scheme = scheme.lower()  # FILE:///x is a file: URL to urlsplit (and pip) too
        if not scheme.endswith("file"):
            return None  # https://, git+https://: the network's
        path = unquote(urlsplit("file:" + rest).path)
        if scheme != "file" and "@" in os.path.basename(path):  # a VCS revision after the path
            path = path.rsplit("@", 1)[0]
        return path or None
    return value or None
