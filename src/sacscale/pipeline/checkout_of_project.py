"""Whether the git checkout git finds for a folder is the one whose code runs: git is asked
only after its own refusals are named (a checkout it does not trust), and its answer is taken
only where the folder lies inside the checkout's top, the checkout has a commit and, for the
package's own folder, git tracks the package's files there."""

from __future__ import annotations

import os
import pwd
import re
import stat

from sacscale.git_command import run_git
from sacscale.pipeline.recordable_checkout import CheckoutRefused

_DUBIOUS = re.compile(r"dubious ownership in repository at '([^']*)'")

# the repository's own files git reads for every comparison: a FIFO or device there would
# hold git (and this record) waiting forever
GIT_OWN_FILES = ("index", "info/attributes", "info/exclude")


def refuse_distrusted(stderr: bytes, path: str) -> None:
    """CheckoutRefused where git refused to read the checkout as another user's (its
    safe.directory check): that is a checkout git will not describe, not a folder outside one.
    The folder another user owns is named with that user (the repository a `.git` file leads
    to, where it is that one); trusting it would let that user rewrite the code recorded."""
    found = _DUBIOUS.search(stderr.decode(errors="replace"))
    if found:
        folder, owner = _owned_by_another(found[1])
        raise CheckoutRefused(
            f"{path}: git refuses to read the checkout at {found[1]}: {folder} is owned by another user ({owner}; "
            "git's 'dubious ownership' check), so its commit and changes cannot be recorded; run as its owner, "
            "or copy the checkout (cp -r) into a folder of your own and run from there")


def _owned_by_another(checkout: str) -> tuple[str, str]:
    """(folder, owner's name): the first of the checkout, its `.git` and the repository folder
    a `.git` file's gitdir: line names that another user owns (the checkout where none is)."""
    dot_git = os.path.join(checkout, ".git")
    folders = [checkout, dot_git]
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            line = handle.readline(4096)
        if line.startswith("gitdir:"):
            folders.append(os.path.normpath(os.path.join(checkout, line[len("gitdir:"):].strip())))
    except OSError:  # a .git folder (or none): the checkout and .git are the folders
        pass
    for folder in folders:
        try:
            uid = os.stat(folder).st_uid
        except OSError:
            continue
        if uid != os.geteuid():
            return folder, _user_name(uid)
    return checkout, "another user"


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def refuse_odd_git_files(top: str) -> None:
    """CheckoutRefused where a file git reads to compare the checkout is there but neither a
    regular file nor a folder (a FIFO git would wait on forever, a device); checked before git
    is asked. A folder is named where the file is read (recordable_checkout), as unreadable."""
    args = [a for name in GIT_OWN_FILES for a in ("--git-path", name)]
    where = run_git(["rev-parse", *args], top, check=True).stdout.split(b"\n")
    for path in (os.path.join(os.fsencode(top), p) for p in where if p):
        try:
            mode = os.stat(path).st_mode  # what a link leads to is what git opens
        except OSError:  # absent, or a dangling link: git reads nothing there
            continue
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise CheckoutRefused(
                f"{os.fsdecode(path)}: not a regular file (a FIFO, socket or device); git reads the "
                "repository's own files from it and would wait on it or fail: make it a regular file or remove it")


def _inside(folder: str, top: str) -> bool:
    real_top, real = os.path.realpath(top), os.path.realpath(folder)
    return os.path.commonpath([real_top, real]) == real_top


def not_this_checkout(path: str, top: str, package: bool) -> str | None:
    """Why the checkout at `top` (git's answer for `path`) does not hold the code at `path`:
    None where it does. CheckoutRefused where the checkout's configuration points git at
    another work tree (core.worktree) than the folder the code is in."""
    if not _inside(path, top):
        worktree = run_git(["config", "--get", "core.worktree"], path, text=True).stdout.strip()
        if worktree:
            raise CheckoutRefused(
                f"{path}: its checkout's git configuration sets core.worktree to {worktree}, so git compares "
                f"{top}, not the folder the code is in; unset it (git config --unset core.worktree)")
        return f"not a git checkout of this project: {path} lies outside {top}, the checkout git finds for it"
    if run_git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], top).returncode != 0:
        return (f"a git repository with no commit yet ({top}): no commit names the code; commit it "
                "(git add -A && git commit) to record it")
    if package and not run_git(["ls-files", "-z", "--", "."], path, timeout=300).stdout:
        return (f"not a git checkout of this project: {path} lies in the git checkout {top} (an ignored or new "
                "folder of it), which tracks none of its files")
    return _ignored_modules(path, top) if package else None


def _ignored_modules(path: str, top: str) -> str | None:
    """Why a checkout whose .gitignore files ignore Python files of the package at `path` is not
    its checkout (the package unpacked into an ignored folder with some files force-added):
    the commit does not hold the code that runs."""
    ignored = run_git(["ls-files", "-z", "--others", "--ignored", "--exclude-per-directory=.gitignore", "--",
                       "*.py"], path, timeout=300).stdout.split(b"\0")
    names = [os.fsdecode(name) for name in ignored if name]
    if not names:
        return None
    more = f" and {len(names) - 1} more" if len(names) > 1 else ""
    return (f"not a git checkout of this project: {path} lies in the git checkout {top}, whose .gitignore files "
            f"ignore its Python files ({os.path.join(path, names[0])}{more}), so no commit of it holds the code")
