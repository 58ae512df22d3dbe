"""Who else could put code where a run's environment sends its processes for it: a path
(code_path_problem: the path and every folder above it, as sacscale.atomic judges a folder
others could swap entries in; a file by its own mode and access list too), and a folder the
run takes code from (code_folder_problem): it may take no new entries from others, sticky bit
or not, and what the run may load from it is judged to the depth it loads it (Reach): every
entry below a folder Python imports packages from, the headers and libraries a compiler
takes, the loader's folders with the subfolders it searches, the caches of compiled kernels;
only the entries directly in PATH (a command's name holds no `/`). Each folder the walk looks
into is judged by its default access list too: what the run makes there (Python's
`__pycache__/`, a cache's entries) inherits it, so another user it gives write could swap what
the run loads next. A link, as an entry or as the folder itself, is judged where it leads,
the folder it leads to as a code folder. The walk is bounded (MAX_JUDGED_ENTRIES): a folder
holding more is refused as too large to judge, never passed unseen."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from sacscale.atomic import default_list_problem, others_can_write_file, refuse_foreign_links, swappable_by_others
from sacscale.pipeline.plan_values import shown_path
from sacscale.pipeline.walked_names import as_walked, lies_inside

# the most entries judged below one folder a variable names (links followed out of it
# included): /usr/lib holds about 73,000 and a venv's site-packages with torch about 47,000,
# looked through in about 1.5 s and 1 s; more is refused as too large to judge
MAX_JUDGED_ENTRIES = 200_000


@dataclass(frozen=True)
class Reach:
    """How deep a run takes code from a folder: every entry below it (`deep`), or those
    directly in it and the whole tree of the subfolders named in `deep_names`; `links_as_code`:
    a link entry leading to a folder is judged as a code folder (not where a variable only roots
    the caches below it, HOME, whose other entries the run does not load)."""
    deep: bool = True
    deep_names: frozenset = frozenset()
    links_as_code: bool = True

    def descends(self, name: str, depth: int) -> bool:
        return self.deep or depth > 0 or name in self.deep_names


WHOLE_TREE = Reach()
COMMANDS = Reach(deep=False)
# the loader searches a library folder's glibc-hwcaps/<level>/ and, before glibc 2.37, the
# legacy hardware-capability subfolders: tls/, the platform's (x86_64/, haswell/) and each
# capability's (avx512_1/), nested in combination (tls/haswell/x86_64/avx512_1/). Their names
# and depth differ by processor and glibc (`ld.so --help` lists this machine's), so no list or
# depth here would hold everywhere: every folder below is judged (/usr/lib/x86_64-linux-gnu
# is about 3,600 entries in all)
LIBRARIES = WHOLE_TREE
CACHE_ROOT = Reach(deep=False, links_as_code=False)
# a Python prefix's library folder (<prefix>/lib, <prefix>/lib64): the zipped standard
# library directly in it (python3XY.zip), the standard library and site-packages below
# python3.X; not the other programs' folders beside them
PYTHON_LIB = Reach(deep=False, deep_names=frozenset({f"python{sys.version_info.major}.{sys.version_info.minor}"}))


def code_path_problem(path: str) -> str | None:
    """Why another user could put what the run loads from `path` there, as a phrase after
    the path; None when no one else can. Judged as written, every component kept as the
    loader walks it (a folder left by `..` is entered first), and where the kernel takes it:
    `..` after a link leaves the link's target, not the folder the text names."""
    written = Path(as_walked(path))
    problem = _problem_at(written)
    resolved = Path(os.path.realpath(path))
    if problem is None and resolved != written:
        problem = _problem_at(resolved)
        if resolved == Path(os.path.normpath(written)):  # the place the name says: no link on the way
            return problem
        if problem and problem.startswith("is inside "):
            return f"leads to {resolved}, {problem.removeprefix('is ')}"
        return f"leads to {resolved}, which {problem}" if problem else None
    return problem


def _problem_at(absolute: Path) -> str | None:
    try:
        refuse_foreign_links(absolute, reading=True)
    except OSError as exc:
        return f"is reached through {exc.filename}, {exc.strerror.split(';')[0]}"
    try:
        there = next(f for f in (absolute, *absolute.parents) if os.path.exists(f))  # "/" is there
        # a run's code and caches: every folder's default list is judged, as before (kept strict;
        # outputs judge only the folder they make entries in)
        found = swappable_by_others(there, every_default=True)
        st = os.stat(there)
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror})"
    if found:
        folder, why = found
        if folder is None and there == absolute:
            return why
        return f"{_where(absolute, Path(folder or there))}, which {why}"
    if there != absolute and stat.S_IMODE(st.st_mode) & 0o002:
        return (f"is not there yet, and {there} lets every user make entries in it "
                f"(mode {stat.S_IMODE(st.st_mode):04o}): another could make it first")
    if there == absolute and stat.S_ISREG(st.st_mode):  # its owner, and whoever else its mode or list lets write it
        return others_can_write_file(st, str(there))
    if not stat.S_ISDIR(st.st_mode) and st.st_uid not in (os.getuid(), 0):
        return f"belongs to uid {st.st_uid}, another user"
    return None


def code_folder_problem(path: str, reach: Reach = WHOLE_TREE) -> str | None:
    """Why another user could put code into the folder `path` (one a code-folder variable
    names, code_path_problem having passed it and the folders above it) beside what the run
    loads from it, or change what is there, as a phrase after the path; None when no one else
    can, or `path` is no folder. The folder may take no new entries from others, sticky bit
    or not: the sticky bit keeps our entries ours, but Python imports a `sitecustomize.py` (or
    a package `sitecustomize/`) another user adds, the loader a library, PATH a command. Each
    entry within `reach` is judged by its own owner, mode, group and access list; a link
    where it leads."""
    folder = os.path.realpath(path)
    try:
        st = os.stat(folder)
    except OSError:
        return None  # not there: judged by the folder it would be made in
    if not stat.S_ISDIR(st.st_mode):
        return None
    problem = _folder_takes_entries(st, folder) or _Walk(folder, reach).problem()
    if problem and folder != os.path.abspath(path):
        return f"leads to {folder}, which {problem}"
    return problem


def _folder_takes_entries(st: os.stat_result, folder: str) -> str | None:
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o002:
        return (f"lets every user make entries in it (mode {mode:04o}), whatever the sticky bit: another could add "
                "a module, library or command beside those the run takes from it")
    return others_can_write_file(st, folder)  # its owner, group and access list


class _Walk:
    """The entries below `root` within `reach`, judged one by one, depth first; `judged`
    holds each real folder judged (no new entries from others), whose links in need no more."""

    def __init__(self, root: str, reach: Reach):
        self.root, self.reach = root, reach
        self.judged = {root}
        self.count = 0

    def problem(self) -> str | None:
        stack = [(self.root, "", 0)]  # a real folder, the name the run reaches it by (from root), its depth
        while stack:
            folder, shown, depth = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError as exc:
                why = f"cannot be listed ({exc.strerror}), so what the run takes from it cannot be judged"
                return f"holds {shown_path(shown.rstrip('/'))}, which {why}" if shown else why
            for entry in entries:
                self.count += 1
                if self.count > MAX_JUDGED_ENTRIES:
                    return (f"holds more than {MAX_JUDGED_ENTRIES} entries below it (links followed), too large for "
                            "planning to judge what the run may load from it: name a smaller folder")
                name = shown + entry.name
                found = self._entry_problem(entry, name, depth, stack)
                if found:
                    return f"holds {shown_path(name)}, which {found}"
        return None

    def _entry_problem(self, entry: os.DirEntry, name: str, depth: int, stack: list) -> str | None:
        try:
            if entry.is_symlink():
                return self._link_problem(entry, name, depth, stack)
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:
            return f"cannot be looked at ({exc.strerror})"
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            return None
        problem = others_can_write_file(st, entry.path)
        walk_it = stat.S_ISDIR(st.st_mode) and entry.path not in self.judged  # not reached through a link already
        if problem is None and walk_it and self.reach.descends(entry.name, depth):
            return self._walked_into(st, entry.path, name, depth, stack)
        return problem

    def _walked_into(self, st: os.stat_result, folder: str, name: str, depth: int, stack: list) -> str | None:
        """Why the run could load another user's code from `folder`, a folder it loads from:
        a default access list giving write (what the run makes in it, as `__pycache__/`,
        inherits it); else None, and the folder goes onto the `stack` to be walked."""
        if problem := default_list_problem(st, folder):
            return problem
        self.judged.add(folder)
        stack.append((folder, name + "/", depth + 1))
        return None

    def _link_problem(self, entry: os.DirEntry, name: str, depth: int, stack: list) -> str | None:
        """A link judged where it leads: a file in a folder judged already by its own bits; else
        the path as code_path_problem judges it, and a folder it leads to as a code folder."""
        target = os.path.realpath(entry.path)
        if target in self.judged:
            return None
        if os.path.dirname(target) in self.judged:
            try:
                st = os.stat(target)
            except OSError:
                return None  # leads to no entry, which no one else may add there
            if not stat.S_ISDIR(st.st_mode):
                return others_can_write_file(st, target) if stat.S_ISREG(st.st_mode) else None
        elif problem := code_path_problem(entry.path):
            return problem
        if not self.reach.links_as_code or not os.path.isdir(target):
            return None
        st = os.stat(target)
        if problem := _folder_takes_entries(st, target):
            return f"leads to {target}, which {problem}"
        if self.reach.descends(entry.name, depth) and (problem := self._walked_into(st, target, name, depth, stack)):
            return f"leads to {target}, which {problem}"
        return None


def _where(absolute: Path, folder: Path) -> str:
    """Where `absolute` is, with respect to `folder` (another user's, or one others may
    change): inside it by name (`..` leaving a folder), or reached there through links (one's own or root's,
    which the kernel follows): then the message names where the path leads, and the folder
    the walk entered (`mine/lk/..` with `lk` a link into eve's folder is hers, not `mine`)."""
    if lies_inside(absolute, folder) and os.path.realpath(folder) == os.path.normpath(folder):
        return f"is inside {os.path.normpath(folder)}"
    target = Path(os.path.realpath(absolute))
    for named in (folder, Path(os.path.realpath(folder))):  # as found, else where the walk entered
        if named in (target, *target.parents):
            return f"leads to {target}, inside {named}"
    return f"is reached through {folder}"


