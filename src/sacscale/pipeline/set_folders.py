"""The run set's own folders (results/<set>, reports/<set>, logs/<set>, benchmarks/<set>),
judged before any rule runs, and the pipeline's own log files.

Snakemake and the rules write into these folders by path: outputs, benchmarks, and logs
through shell redirections (`> logs/<set>/X.log`), which follow a symbolic link standing at
the log's name. So another user who owns such a folder, or may make entries in it, could
plant a link there and have the pipeline (root, say) write through it onto any file. A set
folder is refused where:
- it, or a folder above it up to the root, is reached through another user's link, or
  belongs to another user or lets one rename entries in it (sacscale.atomic.others_can_swap,
  the rule every command's outputs follow: a shared sticky `results/`, as /tmp, is fine);
- it exists and others may write in it (o+w, or g+w for a group holding another user), the
  sticky bit or not: a sticky bit stops them removing our entries, not making new ones at
  the names a rule is about to write.
The umask never decides: a careless 000 (or 002 with a group holding other users) had
Snakemake make the set folders 0777 after they were judged absent, and another user's link
in benchmarks/<set> had a root file overwritten. So the check makes each set folder that is
absent itself (and each absent folder above it), mode 0755 set on the folder it made, and
judges them after; and it takes write for group and others out of this process's umask, so
what Snakemake and the rules make inside them later (logs/<set>/train/, results/<set>/runs/)
is closed to others too (the jobs inherit it; each job's own parse of the workflow does the
same). The workflow judges the folders first (make=False), decides whether the set may be
written (sacscale.evidence.runset), and only then makes them, and never in a dry run
(`snakemake -n`): a refused invocation or a dry run leaves no folder behind. A folder that
could not be made (a file above it) is named by the judgement already. Before all that,
anything but a folder where the pipeline makes one, or a folder at a log's or benchmark's
name, is refused (check_folder_shapes): Snakemake meets it only when a job writes there,
after the jobs before it ran.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
from pathlib import Path
from typing import TextIO

from sacscale.atomic import others_can_swap, others_can_write_file, refuse_foreign_links
from sacscale.pipeline.plan_values import PlanError
from sacscale.usage import printable


def check_set_folders(folders: list[str], run_set: str, make: bool = True) -> None:
    """PlanError naming the first of `folders` (relative to the working folder) that another
    user could write into or redirect, as a config error of `run_set`; with `make`, each one
    absent is made, ours and closed to others, before it is judged again. All are judged
    before any is made, so a set refused for one of them leaves nothing made."""
    _close_umask()
    steps = [set_folder_problem]
    if make:
        steps.append(lambda folder: _made(folder) or set_folder_problem(folder))
    for step in steps:
        for folder in folders:
            if problem := step(folder):
                raise PlanError(f"run_set {run_set}: {problem}; the pipeline writes this set's files there and "
                                "never into a folder another user can change: have it removed (or made yours "
                                "and closed to others), or choose another run_set name")


def _close_umask() -> None:
    """No write for group or others on what this process (and the jobs it starts) makes."""
    os.umask(os.umask(0o022) | 0o022)


def _made(folder: str) -> str | None:
    """Make `folder` and each absent folder above it, 0755 whatever the umask; why it could
    not be made, or None. Each is made 0700 and then opened to reading: the folder it stands
    in was judged (no one else may rename entries there), so the name still holds the folder
    made. One that appears meanwhile is left as it is, and nothing made inside it, for the
    judgement after (another user's is refused there)."""
    absolute = Path(folder).absolute()
    for path in reversed([f for f in (absolute, *absolute.parents) if not os.path.lexists(f)]):
        try:
            os.mkdir(path, 0o700)
            os.chmod(path, 0o755)
        except FileExistsError:  # made meanwhile, by us or another: not ours to make inside
            break
        except OSError as exc:
            return f"{folder}: cannot be made ({path}: {exc.strerror})"
    return None


def set_folder_problem(folder: str) -> str | None:
    """Why another user could write into `folder` or redirect what is written there, as
    `FOLDER: why`; None if no one else can."""
    try:  # a name inside it: its own name is on the way to every file written there
        refuse_foreign_links(Path(folder, "entry"))
    except OSError as exc:
        return f"{folder}: reached through {exc.filename}: {exc.strerror}"
    absolute = Path(folder).absolute()
    chain = [absolute, *absolute.parents]
    existing = next(f for f in chain if f.exists())
    if not existing.is_dir():  # a file above it: named before anything is made, a dry run too
        return f"{folder}: cannot be made ({chain[max(chain.index(existing) - 1, 0)]}: Not a directory)"
    problem = others_can_swap(existing)
    if problem is None and existing == absolute:
        problem = others_can_write_file(os.stat(absolute), str(absolute))
    if problem is None:
        return None
    if existing == absolute:
        return f"{folder}: {problem}"
    return f"{existing} (where {folder} would be made): {problem}"


def open_new_log(path: str | os.PathLike) -> TextIO:
    """The log file at `path` opened for writing as a new file of ours: whatever stands at its
    name (an old log, a link) is removed first, never followed, and the open neither follows a
    link nor opens a file that appeared meanwhile (O_EXCL). Its folder is the set's, ours and
    closed to others (check_set_folders), so nothing else is made there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    return os.fdopen(fd, "w", encoding="utf-8")


def check_folder_shapes(set_folders: list[str], rule_files: list[str], roots: dict[str, str], run_set: str,
                        runs: list[str] = ()) -> None:
    """PlanError naming the first name that stands in the way of what the rules write: anything
    but a folder (a file, a FIFO, a link to one, a dangling link) at a set folder or at a folder
    the rules write logs or benchmarks into, or a folder at a log or benchmark file's name.
    Snakemake finds them only when a job makes or clears its files, after the jobs before it
    ran, in a traceback. The rules' own paths say what is written where: each f"{NAME}/..." or
    name("...") (the rules' helper `results(path)` for RESULTS) in `rule_files` whose NAME is
    a key of `roots` (LOGS: logs/<set>; a last name without a dot is a folder). In a folder's
    path a `{run}` wildcard stands for each of the planned `runs` (results/<set>/runs/<run>
    is made for each); in a file's path any wildcard for any name."""
    def refuse(path: str, problem: str) -> None:
        raise PlanError(f"run_set {run_set}: {printable(path)}: {problem}; remove it (or move it away) "
                        "and run again")

    paths = _rule_paths(rule_files, roots)
    files = {path: root for root, path in paths if "." in os.path.basename(path)}
    folders = {path for _, path in paths if path not in files} | {os.path.dirname(path) for _, path in paths}
    # a folder named by another wildcard is a helper's own `{path}`, not a folder a rule makes
    planned = [p for folder in folders if not _WILDCARD.search(folder.replace(_RUN_WILDCARD, ""))
               for p in _each_run(folder, runs)]
    for pattern in [*set_folders, *sorted(planned)]:
        for folder in sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]:
            if os.path.lexists(folder) and not os.path.isdir(folder):
                refuse(folder, "stands where the pipeline makes a folder and is not a folder")
    for pattern, root in sorted((_WILDCARD.sub("*", file), root) for file, root in files.items()):
        for found in sorted(glob.glob(pattern)):
            if os.path.isdir(found):
                refuse(found, f"a folder stands at a {_KINDS.get(root, 'written')} file's name")


# the rules' names of the set's folders: what a file written there is
_KINDS = {"LOGS": "log", "BENCH": "benchmark", "RESULTS": "result", "REPORTS": "report"}
_RULE_PATH = re.compile(r"\{([A-Z]+)\}/([\w{][^\"'\s]*)")
_HELPER_PATH = re.compile(r"\b([a-z]+)\(f?[\"']([\w{][^\"'\s]*)[\"']\)")  # results("model.json")
_WILDCARD = re.compile(r"\{+[^{}]*\}+")
_RUN_WILDCARD = "{run}"


def _each_run(pattern: str, runs: list[str]) -> list[str]:
    """`pattern` with its `{run}` wildcard as each planned run's name (glob-escaped), the
    other wildcards as `*`."""
    parts = [_WILDCARD.sub("*", part) for part in pattern.split(_RUN_WILDCARD)]
    if len(parts) == 1:
        return parts
    return [glob.escape(run).join(parts) for run in runs]


def _single_braces(path: str) -> str:
    """A rule's path with its wildcards as `{name}` (an f-string's `{{run}}` too)."""
    return _WILDCARD.sub(lambda m: "{" + m.group().strip("{}") + "}", path)


def _rule_paths(rule_files: list[str], roots: dict[str, str]) -> list[tuple[str, str]]:
    """(NAME, path with its wildcards as `{name}`) of each f"{NAME}/..." or name("...") path
    outside comments in `rule_files` whose NAME (the helper's name in capitals) is a key of `roots`, the path
    under that root (run set names hold no glob character)."""
    found = []
    for rule_file in rule_files:
        lines = Path(rule_file).read_text(encoding="utf-8").splitlines()
        code = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
        named = _RULE_PATH.findall(code) + [(helper.upper(), path) for helper, path in _HELPER_PATH.findall(code)]
        found += [(name, f"{roots[name]}/{_single_braces(path)}") for name, path in named if name in roots]
    return found


def file_error_line(exc: OSError, path: str | os.PathLike) -> str:
    """An OSError of writing a file as `FILE: why`: the file it names, else `path`."""
    where = exc.filename if exc.filename is not None else path
    return f"{printable(os.fsdecode(where))}: {exc.strerror or exc}"
