"""A check of the stored diff against the bytes on disk, which trusts neither git's index, its
stat data nor its configuration: every file of HEAD's tree is hashed here as git hashes a
file, and every file of the checkout that HEAD does not hold and HEAD's own .gitignore files
do not ignore is looked for in what the diff stores or lists. Where git's answer left out a
file that differs, the checkout is refused naming it and what hid it, not guessed at."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

import sacscale
from sacscale.git_command import run_git
from sacscale.pipeline.recordable_checkout import NOT_SOURCE, CheckoutRefused, CheckoutUnreadable
from sacscale.report.code_line import LINKED_FOLDER
from sacscale.scratch import scratch_folder

SUBMODULE, LINK, EXECUTABLE = b"160000", b"120000", b"100755"

# the checkout's own settings that change what git calls changed or new, with the values
# that change nothing: one set otherwise is named where git's answer and the bytes disagree
# (each is pinned on git's command line; a refusal names those set here all the same)
HIDING_SETTINGS = {"core.ignorecase": "false", "core.checkstat": "default", "core.trustctime": "true",
                   "core.ignorestat": "false", "core.filemode": "true", "core.symlinks": "true",
                   "core.precomposeunicode": "false", "core.autocrlf": "false", "core.eol": None,
                   "core.worktree": None}


def object_id(data: bytes, width: int) -> str:
    """git's id of a file (blob) holding `data`, SHA-1 or, for a 64-digit id, SHA-256."""
    digest = hashlib.sha256 if width == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def head_tree(top: str) -> dict[bytes, tuple[bytes, str]]:
    """HEAD's files outside NOT_SOURCE: path -> (mode, object id), as committed (no replace ref)."""
    out = run_git(["ls-tree", "-r", "-z", "--full-tree", "HEAD"], top, timeout=300, check=True).stdout
    files = {}
    for entry in filter(None, out.split(b"\0")):
        meta, path = entry.split(b"\t", 1)
        mode, _kind, oid = meta.split(b" ")
        if path.split(b"/", 1)[0].decode(errors="replace") not in NOT_SOURCE:
            files[path] = (mode, oid.decode())
    return files


def diff_names(patch: bytes, folder: str) -> set[str]:
    """Every file name a patch touches (both names of a rename), read by `git apply` (in the
    scratch `folder`) from the same bytes that are stored, so no second look can disagree."""
    if not patch:
        return set()
    out = run_git(["apply", "--numstat", "-z", "-"], folder, stdin=patch, timeout=300, check=True).stdout
    fields, names = out.split(b"\0"), set()
    while fields:
        field = fields.pop(0)
        if not field:
            continue
        name = field.split(b"\t", 2)[2]
        if not name and len(fields) >= 2:  # a rename: its old and new names follow
            names.update(shown(fields.pop(0)) for _ in range(2))
        elif name:
            names.add(shown(name))
    return names


def shown(raw: bytes) -> str:
    return raw.decode("utf-8", errors="backslashreplace")


def _inside(top: str, path: bytes) -> bool:
    real_top = os.path.realpath(top)
    real = os.path.realpath(os.path.join(os.fsencode(top), path))
    return os.path.commonpath([real_top, os.fsdecode(real)]) == real_top


def _refuse_outside_link(top: str, path: bytes) -> None:
    if not _inside(top, path):
        target = shown(os.readlink(os.path.join(os.fsencode(top), path)))
        raise CheckoutRefused(
            f"{shown(path)}: a link to {target}, outside the checkout: the stored diff would hold the link's target "
            "name, not the code it runs; copy that file into the checkout or remove the link")


def _differs(top: str, path: bytes, mode: bytes, oid: str) -> bool:
    """Whether the file on disk at `path` is not HEAD's (mode, oid); links checked first."""
    where = os.path.join(os.fsencode(top), path)
    try:
        info = os.lstat(where)
    except (FileNotFoundError, NotADirectoryError):
        return True
    if stat.S_ISLNK(info.st_mode):
        if mode != LINK:
            raise CheckoutRefused(
                f"{shown(path)}: a link where the commit has a file: the stored diff would hold the link's target "
                "name, not the code it runs; put the file back or copy its target over it")
        _refuse_outside_link(top, path)
        return object_id(os.readlink(where), len(oid)) != oid
    if not stat.S_ISREG(info.st_mode) or mode in (LINK, SUBMODULE):
        return True
    if bool(info.st_mode & stat.S_IXUSR) != (mode == EXECUTABLE):
        return True
    with open(where, "rb") as handle:
        return object_id(handle.read(), len(oid)) != oid


def _same_once_converted(top: str, path: bytes, oid: str) -> bool:
    """Whether git stores the file as `oid` once the committed attributes' conversions (line
    endings, a filter such as LFS's) are applied: a byte difference git itself makes on checkout."""
    where = os.path.join(os.fsencode(top), path)
    if not os.path.isfile(where) or os.path.islink(where):
        return False
    with open(where, "rb") as handle:
        data = handle.read()
    out = run_git([b"hash-object", b"--stdin", b"--path=" + path], os.fsencode(top), stdin=data, timeout=300)
    return out.returncode == 0 and out.stdout.strip().decode() == oid


def changed_on_disk(top: str, tree: dict[bytes, tuple[bytes, str]]) -> list[bytes]:
    """HEAD's files whose bytes, mode or kind on disk are not as committed; a file a sparse
    checkout left out (absent, and skip-worktree in the index) is no change: it is not there
    to run."""
    changed = [p for p, (mode, oid) in sorted(tree.items()) if mode != SUBMODULE and _differs(top, p, mode, oid)]
    absent = [p for p in changed if not os.path.lexists(os.path.join(os.fsencode(top), p))]
    return [p for p in changed if p not in _sparse_left_out(top)] if absent else changed


def _sparse_left_out(top: str) -> set[bytes]:
    out = run_git(["ls-files", "-v", "-z"], top, timeout=300, check=True).stdout
    return {field[2:] for field in out.split(b"\0") if field[:2] == b"S "}


def committed_ignore_rules(top: str, tree: dict[bytes, tuple[bytes, str]], folder: str) -> Callable:
    """A test of paths against HEAD's own .gitignore files only. Why these, not the work tree's:
    a .gitignore that is new or not as committed is not applied where the diff is rebuilt,
    so a file it hides would be missing from the rebuilt tree; judged by the committed rules,
    such a file is found and the checkout refused naming that .gitignore, rather than the
    record quietly storing a tree git status does not show the user. The committed files are
    written at their paths into a scratch repository, which `check-ignore --no-index` reads."""
    run_git(["init", "-q", "--template=", folder], check=True)
    for path, (mode, oid) in tree.items():
        if os.path.basename(path) == b".gitignore" and mode != LINK:
            data = run_git(["cat-file", "blob", oid], top, check=True).stdout
            os.makedirs(os.path.join(os.fsencode(folder), os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(os.fsencode(folder), path), "wb") as handle:
                handle.write(data)

    def ignored(paths: list[bytes]) -> set[bytes]:
        if not paths:
            return set()
        out = run_git(["check-ignore", "--no-index", "-z", "--stdin"], folder, stdin=b"\0".join(paths) + b"\0",
                      timeout=300)
        if out.returncode not in (0, 1):
            reason = (out.stderr.decode(errors="replace").strip().splitlines() or ["no reason given"])[-1]
            raise CheckoutUnreadable(0, f"{top}: git cannot judge new files by the commit's .gitignore ({reason})")
        return set(filter(None, out.stdout.split(b"\0")))
    return ignored


def _entries(top: str, folder: bytes, skip: set[bytes], tracked: set[bytes]) -> list[tuple[bytes, bool]]:
    """(path, is a folder) of the files, links and folders in `folder`, but for `skip`, .git, a
    nested repository (git lists those by their folder, whose files are their own) and a tool's
    cache folder holding no `tracked` file."""
    where = os.path.join(os.fsencode(top), folder)
    try:
        with os.scandir(where) as found:
            names = [(e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False) or e.is_symlink())
                     for e in found]
    except OSError as exc:
        raise CheckoutUnreadable(exc.errno, f"{shown(where)}: cannot be read ({exc.strerror})") from None
    entries = []
    for name, is_dir, is_file in names:
        path = folder + b"/" + name if folder else name
        if name == b".git" or path in skip or (is_dir and os.path.lexists(os.path.join(where, name, b".git"))):
            continue
        if is_dir and path not in tracked and _tool_cache(os.path.join(where, name)):
            continue
        if is_dir or is_file:
            entries.append((path, is_dir))
    return entries


def _tool_cache(folder: bytes) -> bool:
    """Whether `folder` is a dot-named folder that its own .gitignore ignores whole (`*`): how
    tools mark their caches (.ruff_cache, .pytest_cache, .mypy_cache). git lists nothing of it,
    not even that .gitignore, and no module in it can be imported by a package name (a name
    starting with a dot is none), so it is taken as ignored; a .gitignore not as committed that
    hides anything else is refused, as it would hide code from the rebuilt tree."""
    if not os.path.basename(folder).startswith(b"."):
        return False
    rules = os.path.join(folder, b".gitignore")
    if not os.path.isfile(rules) or os.path.islink(rules):
        return False
    with open(rules, "rb") as handle:
        lines = [line.strip() for line in handle.read(4096).splitlines()]
    return b"*" in lines and not any(line.startswith(b"!") for line in lines)


def new_files(top: str, tree: dict[bytes, tuple[bytes, str]], ignored: Callable) -> list[bytes]:
    """The files and links of the checkout that HEAD does not hold and its committed .gitignore
    files do not ignore, outside NOT_SOURCE, submodules and nested repositories; a folder the
    rules ignore is not entered (as git does not)."""
    skip = {os.fsencode(d) for d in NOT_SOURCE} | {p for p, (mode, _) in tree.items() if mode == SUBMODULE}
    tracked = {p[:i] for p in tree for i, byte in enumerate(p) if byte == ord("/")}  # every folder of a tracked file
    level, found = [b""], []
    while level:
        entries = [e for folder in level for e in _entries(top, folder, skip, tracked)]
        hidden = ignored([p + b"/" if is_dir else p for p, is_dir in entries if is_dir or p not in tree])
        level = [p for p, is_dir in entries if is_dir and p + b"/" not in hidden]
        found += [p for p, is_dir in entries if not is_dir and p not in tree and p not in hidden]
    return sorted(found)


def hiding_state(top: str, path: bytes | None = None) -> str:
    """What of the checkout's git settings or state likely hid a file from git's answer."""
    if path is not None:
        out = run_git(["check-ignore", "-v", "--no-index", "-z", "--stdin"], top, stdin=path + b"\0")
        source, line, pattern = (out.stdout.split(b"\0") + [b""] * 3)[:3] if out.returncode == 0 else (b"",) * 3
        if source:
            return (f"ignored by {shown(source)}:{shown(line)} ('{shown(pattern)}'), a .gitignore not as committed: "
                    "commit that line or undo it")
    config = run_git(["config", "--local", "--get-regexp", r"^core\."], top, text=True).stdout.splitlines()
    settings = [(line.split(" ", 1) + [""])[:2] for line in config]
    named = [f"{key}={value}" for key, value in settings
             if key.lower() in HIDING_SETTINGS and HIDING_SETTINGS[key.lower()] != value.lower()]
    replaced = run_git(["for-each-ref", "--count=1", "--format=%(refname)", "refs/replace/"], top, text=True)
    named += [f"a replace ref ({replaced.stdout.strip()})"] if replaced.stdout.strip() else []
    return (f"this checkout sets {', '.join(named)}" if named else
            "no git setting found here: it may have been written while the record was made; run again")


def _refuse_link(top: str, path: bytes, held_files: set[bytes]) -> None:
    """A source link is stored as its target's name, never the code it leads to: refused where
    it leads out of the checkout, to a folder, or to a file the record does not hold itself
    (the project commits no links). A dangling one (an editor's lock file) leads to no code."""
    _refuse_outside_link(top, path)
    where = os.path.join(os.fsencode(top), path)
    if not os.path.exists(where):
        return
    target = shown(os.readlink(where))
    if os.path.isdir(where):
        raise CheckoutRefused(
            f"{shown(path)}: a link to the folder {target}: Python imports the code in it, but the stored diff holds "
            "a link only as its target's name, so that code could not be rebuilt; move the folder's files in place "
            "of the link, or remove it")
    real = os.path.relpath(os.path.realpath(where), os.path.realpath(os.fsencode(top)))
    if real not in held_files:
        raise CheckoutRefused(
            f"{shown(path)}: a link to {target}, a file neither the commit nor the stored diff holds (its "
            ".gitignore files ignore it), so the code the link runs could not be rebuilt; copy that file over the "
            "link, or remove it")


def project_code(top: str) -> list[bytes]:
    """The code this project runs, as paths inside `top`: the package's folder (where Python
    imports sacscale from) and, beside its src/, the workflow folder and Snakefile."""
    package = os.path.dirname(os.path.realpath(sacscale.__file__))
    root, real_top = os.path.dirname(os.path.dirname(package)), os.path.realpath(top)
    paths = [package, os.path.join(root, "workflow"), os.path.join(root, "Snakefile")]
    return [os.fsencode(os.path.relpath(p, real_top)) for p in paths
            if os.path.lexists(p) and os.path.commonpath([real_top, p]) == real_top and p != real_top]


def _code_files(top: str, code: list[bytes]) -> list[bytes]:
    """The files and links in `code` (folders and files inside `top`), ignored ones too; a
    tool's __pycache__ folder is left out (a link of that name is not)."""
    found = []
    for path in code:
        where = os.path.join(os.fsencode(top), path)
        if not os.path.isdir(where) or os.path.islink(where):
            found.append(path)
            continue
        for folder, dirs, files in os.walk(where):
            inner = os.path.relpath(folder, os.fsencode(top))
            dirs[:] = [d for d in dirs if d != b"__pycache__" or os.path.islink(os.path.join(folder, d))]
            links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
            found += [os.path.join(inner, n) for n in files + links]
    return found


def _runs(path: bytes) -> bool:
    """Whether Python or Snakemake runs a file of this name (a module, a rule file)."""
    return path.endswith((b".py", b".smk")) or os.path.basename(path) == b"Snakefile"


def linked_folder(path: Path, name: str) -> dict | None:
    """How the record lists an untracked link to a folder (git's diff of one holds nothing), or
    None for anything else."""
    if path.is_symlink() and path.is_dir():
        return {"path": name, "why": f"{LINKED_FOLDER}{os.readlink(path)}, not stored"}
    return None


def _within(path: bytes, code: list[bytes]) -> bool:
    """Whether `path` lies in the code; with no code named (the package runs from elsewhere), anywhere."""
    return not code or any(path == folder or path.startswith(folder + b"/") for folder in code)


def _refuse_ignored_code(top: str, code: list[bytes], tree: dict, new: list[bytes]) -> None:
    """CheckoutRefused where a file of the code Python or Snakemake runs is one the commit's
    .gitignore files ignore (neither HEAD nor the stored diff holds it), or a link to one. Links
    elsewhere in the checkout (a data folder, a venv, scratch space) lead to no code that runs:
    the record lists them as it lists any new file."""
    held_files = {p for p, (mode, _) in tree.items() if mode not in (LINK, SUBMODULE)} | set(new)
    links = {p for p in tree if tree[p][0] == LINK} | set(new)
    for path in sorted(set(_code_files(top, code)) | {p for p in links if _within(p, code)}):
        where = os.path.join(os.fsencode(top), path)
        if os.path.islink(where):
            _refuse_link(top, path, held_files)
        elif path not in held_files and os.path.isfile(where) and _runs(path):
            raise CheckoutRefused(
                f"{shown(path)}: a file of the code that runs, but the commit's .gitignore files ignore it, so "
                "neither the commit nor the stored diff holds it; commit it (git add -f), or move it out of the code")


def check_record(top: str, patch: bytes, listed: list[dict], code: list[bytes] | None = None) -> set[str]:
    """The names the stored diff holds; CheckoutRefused, naming the file, where a file that
    differs from HEAD on disk (or is new and not ignored by HEAD's .gitignore files) is neither
    in the patch nor listed, where a file of the `code` that runs (project_code) is one those
    .gitignore files ignore, and where a source link leads to a folder, out of the checkout or
    to a file the record does not hold."""
    tree = head_tree(top)
    with scratch_folder("sacscale-ignore-") as folder:
        patched = diff_names(patch, str(folder))
        held = patched | {entry["path"] for entry in listed}
        for path in changed_on_disk(top, tree):
            if shown(path) not in held and not _same_once_converted(top, path, tree[path][1]):
                raise CheckoutRefused(f"{shown(path)}: its bytes on disk are not the commit's, but git's diff does "
                                      f"not hold it ({hiding_state(top)}); the stored diff could not rebuild it")
        found = new_files(top, tree, committed_ignore_rules(top, tree, str(folder / "rules")))
    _refuse_ignored_code(top, project_code(top) if code is None else code, tree, found)
    for path in found:
        if shown(path) not in held:
            raise CheckoutRefused(f"{shown(path)}: a file the commit does not hold and its .gitignore files do not "
                                  f"ignore, but git's listing does not hold it ({hiding_state(top, path)}); the "
                                  "stored diff could not rebuild it")
    return patched
