"""The reference interpreter (planning's `reference.python`, reference-env's `--python`,
train-reference's `--reference-python`), judged before anything starts it: the file itself,
and what Python loads from at start, found as CPython's own start-up finds it (never by
starting it: that would run the code). A venv's `pyvenv.cfg` (beside the interpreter or one
folder up) names the Python it takes its standard library from (`home`); without one the
interpreter's own prefix is found from where it lies. Judged there, as a run's code paths
are: the settings file, `home`, the `lib` folders the search for the standard library passes,
and at the prefix it stops at the folders sys.path holds at start (the standard library, its
zip, lib-dynload, site-packages and Debian's dist-packages), the venv's site-packages too.
Each folder is judged, not every file in it (as PYTHONPATH's are); a venv's base
site-packages are judged whether or not it includes them. The path files (`*.pth`) in each
judged site-packages or dist-packages folder are judged too, as site.py reads them at start:
each is code run at start (its `import` lines are executed), so another user's is refused,
as is one that is not a plain file, is larger than PATH_FILE_MAX_BYTES or one of more than
PATH_FILES_MAX in its folder (not read: what it adds cannot be judged); each folder its
other lines add to sys.path (a relative one is relative to the site-packages folder) is
judged as the folders above are, since `sitecustomize` and any module may be imported from
it. What an `import` line of one's own runs is not read: the modules it imports come from
the folders judged here, and any other file it opens is its owner's own choice."""

from __future__ import annotations

import glob
import os
import shutil
import stat

from sacscale.pipeline.code_paths_env import code_path_problem
from sacscale.pipeline.plan_values import shown_path

VENV_SETTINGS = "pyvenv.cfg"
SETTINGS_MAX_BYTES = 64 * 1024  # a venv's settings are a few lines; a larger file is not read
LIB_FOLDERS = ("lib", "lib64")  # Python's platlibdir: lib, lib64 on some distributions
# the entries of a standard library folder that sys.path holds at start
STDLIB_ENTRIES = ("lib-dynload", "site-packages", "dist-packages")
PACKAGE_FOLDERS = ("site-packages", "dist-packages")  # the folders whose .pth files site.py reads
PATH_FILE_MAX_BYTES = SETTINGS_MAX_BYTES  # a .pth file is a few lines; a larger one is not read
PATH_FILES_MAX = 1000  # a site-packages folder holds a few .pth files; more are not read
OWN = "name an interpreter of your own"
OTHERS_TAIL = f"it is started as this user, so another user's code could run as this user: {OWN}"


def interpreter_problem(python: str, start: str | None = None) -> str | None:
    """Why the interpreter `python` names would run code another user could put there, or is
    not an interpreter, as the path and a phrase after it (for a key or option to lead); None
    when it would not. Taken as the commands starting it take it, from `start` (default: this
    folder), and a bare name (`python3`) also as the file PATH finds for it, which a caller
    might start instead. A script (`#!`) is refused whoever owns it: what its line starts
    (env's options, its own PATH, a file it passes on) is the kernel's and the shell's
    reading, not one this check can repeat."""
    paths = [os.path.join(start or os.getcwd(), python)]
    found = shutil.which(python) if os.sep not in python else None
    for path in paths + ([found] if found else []):
        if problem := code_path_problem(path):
            return f"{shown_path(path)} {problem}; {OTHERS_TAIL}"
        if _is_script(path):
            return (f"{shown_path(path)} is a script (a #! line), not a Python interpreter, and the program its "
                    "line starts is not judged: give the interpreter itself (e.g. <venv>/bin/python)")
        if problem := _load_problem(path):
            return f"{shown_path(path)} {problem}"
    return None


def _is_script(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"#!"
    except OSError:
        return False  # not there yet (--create makes it) or unreadable: the command names it


def _load_problem(path: str) -> str | None:
    """Why another user could put code where the interpreter at `path` loads it from at
    start, as a phrase naming the settings file and the folder; None when no one else can.
    The settings files are looked for where CPython looks (one folder up and beside the path
    it is started by, unresolved: a venv's bin/python may be a link), both where both are."""
    if not os.path.isfile(path):
        return None  # not made yet: there is nothing it loads from
    bin_folder = os.path.dirname(os.path.abspath(path))
    homes = []
    for settings in (os.path.join(os.path.dirname(bin_folder), VENV_SETTINGS), os.path.join(bin_folder, VENV_SETTINGS)):
        if not os.path.lexists(settings):
            continue
        reads = f"reads its venv's settings from {shown_path(settings)}"
        if problem := _first_problem(reads, [settings]):  # another user's link is never followed to read it
            return problem
        text, problem = _read_small(settings, SETTINGS_MAX_BYTES, "a venv's settings are a few lines")
        if problem:
            return f"{reads}: it {problem}, so what the interpreter loads cannot be judged: {OWN}"
        packages = _stdlib_folders(os.path.dirname(settings), "site-packages")
        if problem := _packages_problem(f"imports at start from its venv's packages (beside {shown_path(settings)})",
                                        packages):
            return problem
        named = f"its venv's settings {shown_path(settings)} name"
        for home in _homes(text):
            if not os.path.isabs(home):
                return (f"takes its Python from the home {named}: {shown_path(home)} is not an absolute path (where it "
                        f"leads depends on the folder Python starts in): {OWN}")
            if problem := _first_problem(f"takes its Python from the home {named}", [home]):
                return problem
            homes.append((home, f"the Python {named} as home"))
    for start, whose in homes or [(os.path.dirname(os.path.realpath(path)), "its own Python")]:
        for how, folder in _prefix_search(start, whose):
            if problem := _packages_problem(how, [folder]):
                return problem
    return None


def _first_problem(how: str, paths) -> str | None:
    for path in paths:
        if problem := code_path_problem(path):
            return f"{how}: {shown_path(path)} {problem}; {OTHERS_TAIL}"
    return None


def _packages_problem(how: str, folders) -> str | None:
    """_first_problem of the folders, and of what the .pth files in each site-packages or
    dist-packages folder among them load at start."""
    for folder in folders:
        if problem := _first_problem(how, [folder]):
            return problem
        if os.path.basename(folder) in PACKAGE_FOLDERS and (problem := _path_files_problem(folder)):
            return problem
    return None


def _path_files_problem(folder: str) -> str | None:
    """Why the .pth files site.py reads in `folder` at start would run another user's code or
    add a folder another user could put code in, as a phrase naming the file and the folder;
    None when none would. Named as site.py finds them: `*.pth`, not hidden, in any order."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".pth") and not n.startswith("."))
    except OSError:
        return None  # not there, not a folder or not readable: site.py reads no .pth files there either
    runs = f"runs at start the path files (.pth) in {shown_path(folder)}"
    if len(names) > PATH_FILES_MAX:
        return (f"{runs}: it holds {len(names)} of them, more than {PATH_FILES_MAX}, so what the interpreter "
                f"loads cannot be judged: {OWN}")
    for name in names:
        path_file = os.path.join(folder, name)
        if problem := _first_problem(runs, [path_file]):  # another user's file or link: its lines run as code
            return problem
        text, problem = _read_small(path_file, PATH_FILE_MAX_BYTES, "a path file is a few lines")
        if problem:
            return f"{runs}: {shown_path(path_file)} {problem}, so what the interpreter loads cannot be judged: {OWN}"
        if problem := _first_problem(f"adds to sys.path at start the folders {shown_path(path_file)} names",
                                     _path_file_folders(folder, text)):
            return problem
    return None


def _path_file_folders(folder: str, text: str | None) -> list[str]:
    """The folders a .pth file's lines add to sys.path, read as site.py reads them: each line
    but comments, blank ones and `import` lines (run, not added), stripped at its end, a
    relative one joined to `folder`. Every reading of its line breaks and of a leading
    byte-order mark is taken (Python versions differ): one that differs must not hide the
    one that is taken. A line with a NUL names no folder (site.py finds none there)."""
    found = []
    for reading in (text or "", (text or "").removeprefix("\ufeff")):
        for line in reading.replace("\r\n", "\n").replace("\r", "\n").split("\n") + reading.splitlines():
            if line.startswith("#") or not line.strip() or line.startswith(("import ", "import\t")) or "\0" in line:
                continue
            found.append(os.path.abspath(os.path.join(folder, line.rstrip())))
    return list(dict.fromkeys(found))


def _prefix_search(start: str, whose: str):
    """(how, folder) for the folders CPython's search for the standard library of `whose`
    passes from the folder `start` up (each `lib`, where another user could put one), and at
    the prefix it stops at (the first whose lib holds a python3.X/os.py or a python3X.zip)
    for those sys.path holds at start."""
    for folder in dict.fromkeys([start, *_parents(start)]):
        found = [entry for lib in LIB_FOLDERS for entry in _python_entries(os.path.join(folder, lib))]
        for lib in LIB_FOLDERS:
            yield f"looks for the standard library of {whose} from {shown_path(start)} up", os.path.join(folder, lib)
        if any(_is_stdlib(entry) for entry in found):
            loaded = [*found, *(os.path.join(entry, name) for entry in found for name in STDLIB_ENTRIES),
                      *_stdlib_folders(os.path.join(folder, "local"), "dist-packages")]  # Debian's site adds these
            imports = f"imports at start from the prefix {shown_path(folder)} of {whose}"
            yield from ((imports, entry) for entry in loaded)
            return


def _parents(folder: str) -> list[str]:
    parents = []
    while (up := os.path.dirname(folder)) != folder:
        parents.append(folder := up)
    return parents


def _python_entries(lib: str) -> list[str]:
    return sorted(glob.glob(os.path.join(glob.escape(lib), "python3*")))


def _is_stdlib(entry: str) -> bool:
    if entry.endswith(".zip"):
        return os.path.isfile(entry)
    return any(os.path.isfile(os.path.join(entry, name)) for name in ("os.py", "os.pyc"))


def _stdlib_folders(prefix: str, entry: str | None = None) -> list[str]:
    """The python3.X folders (or an `entry` of each) under the prefix's lib folders."""
    found = [e for lib in LIB_FOLDERS for e in _python_entries(os.path.join(prefix, lib)) if os.path.isdir(e)]
    return [os.path.join(e, entry) for e in found] if entry else found


def _homes(text: str | None) -> list[str]:
    """The `home` values of a venv's settings, read as CPython reads them (the first line
    `home = ...`, its key in any case); every such line, split at any line break, is taken:
    a reading that differs from CPython's must not hide the one it takes."""
    if not text:
        return []
    homes = []
    for line in text.split("\n") + text.splitlines():
        key, equals, value = line.partition("=")
        if equals and key.strip().lower() == "home" and value.strip():
            homes.append(value.strip())
    return list(dict.fromkeys(homes))


def _read_small(path: str, max_bytes: int, why_small: str) -> tuple[str | None, str | None]:
    """(text, None) of a small file Python reads at start (a venv's settings, a .pth file),
    or (None, why it is not read): a plain file of at most `max_bytes`, opened without
    waiting (a fifo would block). Another user's link on the way is refused by
    code_path_problem before this reads it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, None  # a link to nothing: CPython reads no settings there either
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, "is not a plain file"
        data = b""
        while len(data) <= max_bytes and (chunk := os.read(fd, max_bytes + 1 - len(data))):
            data += chunk
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        return None, f"is larger than {max_bytes} bytes ({why_small})"
    return data.decode("utf-8", "surrogateescape"), None
