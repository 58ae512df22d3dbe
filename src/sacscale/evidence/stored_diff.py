"""The set's stored diff (environment.json project.diff, source.diff): the file the record
describes (its size, a whole number of bytes, and hash), and against the commit it is
recorded beside: the pipeline writes it as `git diff HEAD` of the checkout at that
commit (sacscale.pipeline.environment source_diff), so it applies to that commit's tree.
A diff that does not is another tree's change, put in with its size and hash rewritten:
the page's rebuild line (check the commit out, apply the diff) would not rebuild the code.

It is applied, with `git apply --check --cached`, to a scratch index read from the commit
(nothing in the checkout is written), where the git checkout this code runs from holds the
commit. Where it does not (a shallow clone, another repository, no git), a note says the
diff was not checked: the commit is then said to be missing elsewhere, never failed.

A tree recorded dirty holds a change, which its stored diff holds or lists as left out (a
large untracked file, a nested repository): an empty (or absent) stored file that lists nothing beside
a dirty tree cannot rebuild the code that ran, whatever size the record gives it.

The changes the record lists (changed_files, untracked_files, untracked_not_stored) are named
as git names them: relative to the checkout, with no `.`, `..` or empty part (a folder ends
in one `/`); `results/../src/x.py` reads as an output folder's file and is code."""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.code_history import CODE_ROOT, git_output, git_run, is_commit_id, is_shallow
from sacscale.evidence.manifest import sha256_file
from sacscale.evidence.result import EvidenceStructureError, load_json
from sacscale.evidence.shared_facts import opt
from sacscale.git_command import GitFailed
from sacscale.pipeline.code_content import diff_names
from sacscale.pipeline.recordable_checkout import NOT_SOURCE
from sacscale.scratch import scratch_folder

DIFF_REDUCED = "source_diff_reduced.json"  # a committed set whose stored diff was reduced after recording


def _of_the_set(name) -> bool:
    """A name environment.json may give its stored diff: a file directly in the set."""
    return isinstance(name, str) and "/" not in name and not name.startswith(".")


def _stored(root: Path, env: dict) -> Path | None:
    """The set's non-empty stored diff, where environment.json names one of the set's files."""
    name = opt(env, "project", "diff", "file")
    if not _of_the_set(name):
        return None  # a name that is no file of the set is named by diff_findings
    path = root / name
    return path if path.is_file() and path.stat().st_size > 0 else None


def _original(root: Path) -> tuple:
    """(bytes, sha256) of the stored diff before it was reduced, as DIFF_REDUCED records it."""
    try:
        original = load_json(root, DIFF_REDUCED).get("original")
    except EvidenceStructureError:
        return (None, None)
    return (original.get("bytes"), original.get("sha256")) if isinstance(original, dict) else (None, None)


def _no_diff_problems(env: dict, strict: bool) -> list[str]:
    """A commit recorded without the diff verify-env always stores beside it (a set made by this code)."""
    commit = opt(env, "project", "commit")
    if not strict or not isinstance(commit, str):
        return []
    return [f"set: stored diff: environment.json records commit {commit[:12]!r} but no project.diff, which the "
            "pipeline's verify-env always writes (empty for a clean tree): whether the code differed from the "
            "commit rests on nothing"]


def _size_kind_problems(name: str, diff: dict) -> list[str]:
    """`bytes`, where given, a whole number (json writes len() as one; 0.0 or false is not it)."""
    if "bytes" not in diff or type(diff["bytes"]) is int:
        return []
    size = diff["bytes"]
    return [f"set: stored diff: environment.json project.diff.bytes is {str(size)[:20]!r} "
            f"({type(size).__name__}), not a whole number: the pipeline records {name[:60]!r}'s size in bytes"]


def _held_findings(root: Path, name: str, recorded: tuple) -> tuple[list[str], list[str]]:
    """(problems, notes): the stored file is the one the record describes, size and hash."""
    path = root / name
    if not path.is_file():
        if recorded[0] == 0:
            return [], [f"{name}: environment.json records an empty diff (0 bytes); the set stores none"]
        return [f"set: stored diff: environment.json records {name} ({recorded[0]!r} bytes), the set has none"], []
    held = (path.stat().st_size, sha256_file(path))
    if held == recorded:
        return [], []
    if (root / DIFF_REDUCED).is_file() and _original(root) == recorded:
        return [], [f"{name}: reduced after it was recorded ({DIFF_REDUCED} lists what was taken out): "
                    "environment.json's size and hash are the original's"]
    return [f"set: stored diff: environment.json says {name} is {recorded[0]!r} bytes, sha256 "
            f"{str(recorded[1])[:12]!r}; it is {held[0]} bytes, sha256 {held[1][:12]!r}"], []


def diff_findings(root: Path, env: dict, strict: bool = False) -> tuple[list[str], list[str]]:
    """(problems, notes): the stored diff environment.json describes (file, bytes, sha256;
    shown on the page) is source.diff as the set holds it, and a clean tree stored an empty one.
    In a set made by this code (`strict`) a recorded commit comes with its diff: the pipeline's
    verify-env always stores one (--diff-output), empty for a clean tree."""
    diff = opt(env, "project", "diff")
    if not isinstance(diff, dict) or not isinstance(diff.get("file"), str):
        return _no_diff_problems(env, strict), []
    name, recorded = diff["file"], (diff.get("bytes"), diff.get("sha256"))
    wrong_kind = _size_kind_problems(name, diff)
    problems = list(wrong_kind)
    if opt(env, "project", "dirty") is False and recorded[0] not in (0, None):
        problems.append(f"set: code dirty: environment.json says False, its stored diff {name} holds "
                        f"{recorded[0]!r} bytes")
    if not _of_the_set(name):
        return problems + [f"set: stored diff: environment.json names {name[:60]!r}, not a file of the set"], []
    if wrong_kind:
        return problems, []  # not a size the pipeline wrote: not compared as one (0.0 == 0, false == 0)
    held_problems, notes = _held_findings(root, name, recorded)
    return problems + held_problems, notes


def _why_unreadable(commit: str, code_root: Path) -> str | None:
    """Why the commit cannot be read from the checkout this code runs from, or None."""
    if git_output(["rev-parse", "--git-dir"], code_root) is None:
        return f"this code ({code_root}) is not in a git checkout"
    if git_output(["cat-file", "-e", f"{commit}^{{commit}}"], code_root) is not None:
        return None
    if is_shallow(code_root):
        return "it is not in this shallow clone's history"
    return "it is not in this checkout's repository"


def _apply_error(diff: Path, commit: str, code_root: Path) -> str | None:
    """git's first complaint where the diff does not apply to the commit's tree, else None."""
    with scratch_folder("sacscale-diff-") as folder:
        index = {"GIT_INDEX_FILE": str(folder / "index")}
        read = git_run(["read-tree", commit], code_root, index)
        if read is None or read[0] != 0:
            return None  # the commit was found; a tree git cannot read is not the diff's fault
        done = git_run(["apply", "--check", "--cached", "--", str(diff.resolve())], code_root, index)
    if done is None:
        return None
    lines = [line.strip() for line in done[2].splitlines() if line.strip()]
    return (lines[0][:120] if lines else f"git apply exit status {done[0]}") if done[0] != 0 else None


def diff_apply_findings(root: Path, env: dict, code_root: Path = CODE_ROOT) -> tuple[list[str], list[str]]:
    """(problems, notes): the stored diff applies to the recorded commit. An empty diff (a
    clean tree) changes nothing and needs no check."""
    diff, commit = _stored(root, env), opt(env, "project", "commit")
    if diff is None or not is_commit_id(commit):
        return [], []
    why = _why_unreadable(commit, code_root)
    if why is not None:
        return [], [f"{diff.name}: not checked against commit {commit[:12]}: {why}"]
    try:
        error = _apply_error(diff, commit, code_root)
    except OSError as exc:
        return [], [f"{diff.name}: not checked against commit {commit[:12]}: no scratch folder ({exc})"]
    if error is None:
        return [], []
    return [f"set: stored diff {diff.name} does not apply to commit {commit[:12]} ({error}): it is not the change "
            "of that commit's tree that ran, and the page's rebuild line would not rebuild the code"], []


def _as_git_names(name: str) -> bool:
    """A path as git names a file of the checkout: relative, no `.`, `..` or empty part; a
    folder (an untracked one, a nested repository) ends in one `/`."""
    return all(part not in ("", ".", "..") for part in name.removesuffix("/").split("/"))


def _names_of_change(entry: str, whole: set) -> list[str]:
    """The names one changed_files entry gives: the record writes a rename or copy as `old ->
    new`, but a file may be named so itself; an entry also listed untracked (git never reports
    an untracked file renamed) or held whole by the stored diff is that one file."""
    return [entry] if entry in whole else entry.split(" -> ")


def _listed_names(env: dict, held: set | None = None) -> dict[str, list[str]]:
    """The names of changed files each list of environment.json gives (a rename as both names;
    `held`, the names the stored diff holds, where known)."""
    project, diff = opt(env, "project"), opt(env, "project", "diff")
    lists = {"project.changed_files": project.get("changed_files") if isinstance(project, dict) else None,
             "project.diff.untracked_files": diff.get("untracked_files") if isinstance(diff, dict) else None,
             "project.diff.untracked_not_stored": diff.get("untracked_not_stored") if isinstance(diff, dict) else None}
    entries = {field: [entry.get("path") if isinstance(entry, dict) else entry
                       for entry in (found if isinstance(found, list) else [])] for field, found in lists.items()}
    whole = {name for name in entries["project.diff.untracked_files"] if isinstance(name, str)} | (held or set())
    names: dict[str, list[str]] = {}
    for field, found in entries.items():
        for name in (n for n in found if isinstance(n, str)):
            names.setdefault(field, []).extend(_names_of_change(name, whole) if field.endswith("changed_files")
                                               else [name])
    return names


def listed_name_problems(env: dict) -> list[str]:
    """A change listed by a name git does not give: the folder it reads as is not the file's."""
    problems = []
    for field, names in _listed_names(env).items():
        odd = [name for name in names if not _as_git_names(name)]
        if odd:
            more = f" (and {len(odd) - 1} more)" if len(odd) > 1 else ""
            problems.append(f"set: changed files: environment.json {field} lists {odd[0][:80]!r}{more}, not a name "
                            "git gives (relative to the checkout, with no '.', '..' or empty part): the file it names "
                            "is not where it reads, and the record was not written by the pipeline")
    return problems


def _outputs_only(project: dict) -> bool:
    """Every change the record lists is in a pipeline output folder (results/ ...): an older
    set's own folder made its checkout dirty while its code was as committed (the dirty flag
    counts only code since); the list must be whole (changed_count) and named as git names
    files (`results/../src` is no output) to say so."""
    changed = project.get("changed_files")
    if not isinstance(changed, list) or not changed or project.get("changed_count") != len(changed):
        return False
    return all(isinstance(entry, str) and all(_as_git_names(name) and name.split("/", 1)[0] in NOT_SOURCE
                                              for name in entry.split(" -> "))
               for entry in changed)


def _empty_stored(root: Path, name) -> str | None:
    """How the stored diff rebuilds nothing (absent, or 0 bytes on disk), else None; None also
    for a name that is no file of the set (diff_findings names it)."""
    if not _of_the_set(name):
        return None
    path = root / name
    if not path.is_file():
        return "absent from the set"
    return "empty (0 bytes)" if path.stat().st_size == 0 else None


def dirty_without_diff_problems(root: Path, env: dict) -> list[str]:
    """A tree recorded dirty whose stored diff, the file the set holds, is empty or absent and
    lists no file left out of it (judged by the file, not the size the record gives it)."""
    project, diff = opt(env, "project"), opt(env, "project", "diff")
    if not isinstance(project, dict) or project.get("dirty") is not True or not isinstance(diff, dict):
        return []
    empty = _empty_stored(root, diff.get("file"))
    if empty is None or diff.get("untracked_not_stored") or _outputs_only(project):
        return []
    changed = project.get("changed_files")
    shown = ", ".join(map(str, changed[:3])) + (" ..." if len(changed) > 3 else "") \
        if isinstance(changed, list) and changed else "no file listed"
    return [f"set: code dirty: environment.json says True ({shown}), its stored diff {diff.get('file')} is {empty} "
            "and lists no file left out of it: the commit and the diff cannot rebuild the code that ran "
            "(the pipeline's verify-env stores every change of a dirty tree)"]


def _source_names(env: dict, held: set | None = None) -> list[str]:
    """The code (no output folder's file) that changed_files and untracked_files name."""
    names = _listed_names(env, held)
    listed = names.get("project.changed_files", []) + names.get("project.diff.untracked_files", [])
    return list(dict.fromkeys(n for n in listed if _as_git_names(n) and n.split("/", 1)[0] not in NOT_SOURCE))


def _held_names(root: Path, diff: dict) -> set[str] | None:
    """The names the stored diff holds (as `git apply` reads them) and lists as left out (or
    taken out of it after recording, as DIFF_REDUCED says); None
    where git cannot read it (a diff that does not apply is named by diff_apply_findings)."""
    entries = (diff.get("untracked_not_stored") or []) + _reduced_away(root)
    left_out = {entry.get("path") for entry in entries if isinstance(entry, dict)}
    path = root / diff["file"] if _of_the_set(diff.get("file")) else None
    if path is None or not path.is_file():
        return left_out
    try:
        with scratch_folder("sacscale-names-") as folder:
            return diff_names(path.read_bytes(), str(folder)) | left_out
    except (GitFailed, OSError):
        return None


def _reduced_away(root: Path) -> list:
    """The files taken out of a stored diff reduced after recording (DIFF_REDUCED's `removed`)."""
    if not (root / DIFF_REDUCED).is_file():
        return []
    try:
        removed = load_json(root, DIFF_REDUCED).get("removed")
    except EvidenceStructureError:
        return []
    return removed if isinstance(removed, list) else []


def _held(name: str, held: set[str]) -> bool:
    """A file held by name; an untracked folder (git lists it as `folder/`) by a file in it."""
    return name in held or (name.endswith("/") and any(h.startswith(name) for h in held if isinstance(h, str)))


def listed_change_problems(root: Path, env: dict) -> list[str]:
    """A record whose changed_files or untracked_files name a source file is dirty, and its
    stored diff holds each of them or lists it as left out: a clean record beside a listed
    change (a link whose diff held nothing) cannot say what ran."""
    project, diff = opt(env, "project"), opt(env, "project", "diff")
    held = _held_names(root, diff) if isinstance(diff, dict) and isinstance(diff.get("file"), str) else None
    names = _source_names(env, held) if isinstance(project, dict) else []
    if not names:
        return []
    problems = []
    if project.get("dirty") is not True:
        problems.append(f"set: code dirty: environment.json says {project.get('dirty')!r}, but it lists "
                        f"{names[0][:80]!r} as changed{' (and more)' if len(names) > 1 else ''}: a record that names "
                        "a changed source file is a dirty one, and the commit alone cannot rebuild the code that ran")
    if project.get("dirty") is True and dirty_without_diff_problems(root, env):
        return problems  # an empty diff beside a dirty tree: named there
    missing = [name for name in names if held is not None and not _held(name, held)]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        problems.append(f"set: stored diff: environment.json lists {missing[0][:80]!r}{more} as changed, but its "
                        f"stored diff {diff['file']} neither holds it nor lists it as left out: the commit and the "
                        "diff cannot rebuild the code that ran")
    return problems
