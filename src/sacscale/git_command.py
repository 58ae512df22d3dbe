"""git, asked about this project's checkout for a record of the code that ran (its commit,
whether it is dirty, its stored diff) or for verify's reading of that record. Every such
call is built here, so that what the user's shell or git settings say does not change the
answer: git sees no GIT_* variable of the caller's (which can point it at another
repository, index or configuration, or reshape its diff), and the settings that would
change a diff's shape, hide a file or run a program of the user's are pinned."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from sacscale.scratch import scratch_folder

# Each setting given on git's command line, which no config file overrides:
# no hook and no file-system monitor runs a program of the checkout's configuration; no
# user's global excludes file hides a file (the checkout's own info/exclude is left out by
# UNTRACKED); no user's global attributes file sets a filter or diff driver that rewrites
# what is compared (each repository's own info/attributes is judged: info_attributes_path); the
# index's stat data is not trusted over the files' content (nor compared by size and mtime
# only); file names are compared by case and by bytes; a link, an executable bit are seen as
# they are; and verify's `git apply` takes a patch with trailing spaces as the pipeline wrote it.
PINNED_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.excludesFile=",
                 "-c", "core.attributesFile=", "-c", "core.ignoreStat=false", "-c", "core.checkStat=default",
                 "-c", "core.trustctime=true", "-c", "core.ignoreCase=false", "-c", "core.precomposeUnicode=false",
                 "-c", "core.symlinks=true", "-c", "core.fileMode=true", "-c", "apply.whitespace=nowarn")

# a diff `git apply` rebuilds the tree from: three lines of context (whatever diff.context
# says), a submodule as its gitlink line (diff.submodule=log or =diff store no patch, or the
# submodule's own files), every submodule compared, and no colour, prefix, external or
# text-converting driver of the user's
PATCH_OPTIONS = ("--binary", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv", "--unified=3",
                 "--submodule=short", "--ignore-submodules=none", "--src-prefix=a/", "--dst-prefix=b/")


# `ls-files` options for the untracked files: judged by the project's .gitignore files only,
# not by the checkout's own info/exclude or a user's excludes file (--exclude-standard)
UNTRACKED = ("--others", "--exclude-per-directory=.gitignore")


def info_attributes_path(top: str | bytes) -> bytes:
    """The path of the attributes file git reads as the repository's own at `top` (its
    info/attributes: in the common git folder for a linked worktree, in .git/modules for a
    submodule), as git names it: no git setting turns that file off."""
    where = run_git(["rev-parse", "--git-path", "info/attributes"], top, check=True).stdout.rstrip(b"\n")
    # git gives the path relative to the folder it ran in, `top`
    return os.path.join(os.fsencode(top), where)


def committed_attributes_files(top: str | bytes) -> list[bytes]:
    """The paths (under `top`) of the .gitattributes files the checkout at `top` tracks."""
    out = run_git(["ls-files", "-z", "--", ":(glob)**/.gitattributes"], top, timeout=300, check=True).stdout
    return [os.path.join(os.fsencode(top), n) for n in out.split(b"\0") if n]


def uncommitted_attributes_files(top: str, excludes: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(path, how) of each .gitattributes file in the work tree that is not as committed:
    "new" (untracked, ignored or not: git reads it either way) or "changed" (modified or
    deleted against HEAD). Such a file sets filters for what git compares, so the stored diff
    would hold it but not the change it filters (refused, not diffed with HEAD's attributes:
    the clone the diff is applied in reads the new file too). `excludes`: pathspecs left out."""
    names = [":(glob)**/.gitattributes", *excludes]
    with content_index(top) as index:
        changed = run_git(["diff", "HEAD", "--name-only", "--no-renames", "-z", "--", *names], top,
                          extra_env=index, timeout=300, check=True).stdout
        new = run_git(["ls-files", "--others", "-z", "--", *names], top, extra_env=index, timeout=300,
                      check=True).stdout
    return [(os.fsdecode(n), how) for how, out in (("new", new), ("changed", changed)) for n in out.split(b"\0") if n]


def submodules(top: str) -> list[str]:
    """The paths (relative to `top`) of the checkout's submodules whose work tree is there."""
    out = run_git(["ls-files", "--stage", "-z"], top, timeout=300, check=True).stdout
    paths = [f.split(b"\t", 1)[1] for f in out.split(b"\0") if f.startswith(b"160000 ")]
    return [os.fsdecode(p) for p in paths if os.path.lexists(os.path.join(os.fsencode(top), p, b".git"))]


def _with_untracked_files(top: str, prefix: str = "") -> list[str]:
    """The submodules (at any depth) holding a file that no committed .gitignore ignores and
    their commit does not track: judged by UNTRACKED, as this checkout's own new files are,
    not by a submodule's own info/exclude (which git status reads)."""
    found = []
    for path in submodules(top):
        where = os.path.join(top, path)
        if run_git(["ls-files", *UNTRACKED, "-z"], where, timeout=300, check=True).stdout:
            found.append(prefix + path)
        found += _with_untracked_files(where, f"{prefix}{path}/")
    return found


def dirty_submodules(top: str) -> list[str]:
    """The submodules whose work tree holds changes of their own (modified or new files) that
    their commit does not: a diff of this checkout stores only their commit."""
    return sorted(set(_with_modified_files(top) + _with_untracked_files(top)))


def _with_modified_files(top: str) -> list[str]:
    """The submodules git status finds modified files (or untracked ones) in."""
    out = run_git(["status", "--porcelain=v2", "-z", "--ignore-submodules=none"], top, timeout=300, check=True).stdout
    fields, dirty = out.split(b"\0"), []
    while fields:
        field = fields.pop(0)
        parts = field.split(b" ", 9 if field.startswith(b"2 ") else 8)
        # a submodule's state is S, then C (commit changed), M (modified files), U (untracked)
        state = parts[2] if field[:2] in (b"1 ", b"2 ") else b""
        if state.startswith(b"S") and (state[2:3] == b"M" or state[3:4] == b"U"):
            dirty.append(parts[-1].decode("utf-8", errors="backslashreplace"))
        if field.startswith(b"2 ") and fields:
            fields.pop(0)  # a rename's old name
    return dirty


def git_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without any of git's own variables (`git help git`,
    ENVIRONMENT: GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_COMMON_DIR,
    GIT_CONFIG_*, GIT_DIFF_OPTS, GIT_EXTERNAL_DIFF, ...): each one either points git at
    another repository, index, object store or configuration, or reshapes its output, and
    none is needed to read a checkout. `extra` (the caller's own, such as a scratch index)
    is added after. Optional locks are off: reading does not rewrite the checkout's index.
    The system attributes file (/etc/gitattributes) is not read: its filter would rewrite what
    is compared as a user's would. The system config is still read (GIT_CONFIG_NOSYSTEM is
    not set): a committed .gitattributes filter, such as LFS's, needs its config from there.
    Replace refs are not followed: a commit, tree or file replaced by another would be
    compared as the replacement while `rev-parse HEAD` names the original."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "GIT_OPTIONAL_LOCKS": "0", "GIT_ATTR_NOSYSTEM": "1", "GIT_NO_REPLACE_OBJECTS": "1", **(extra or {})}


def git_command(args: Sequence[str | bytes], top: str | bytes | None = None) -> list[str | bytes]:
    """The command line for `git args` (run in `top` when given), with PINNED_CONFIG."""
    where = ["-C", top] if top is not None else []
    return ["git", *PINNED_CONFIG, *where, *args]


class GitFailed(subprocess.CalledProcessError):
    """git refused to read the checkout (a corrupt index, a repository it does not trust):
    shown as git's own reason, not as its command line."""

    def __str__(self) -> str:
        err = self.stderr.decode(errors="replace") if isinstance(self.stderr, bytes) else (self.stderr or "")
        lines = [line.strip() for line in err.splitlines() if line.strip()]
        reason = next((line for line in lines if line.startswith("fatal:")), lines[-1] if lines else "no reason given")
        where = next((self.cmd[i + 1] for i, a in enumerate(self.cmd[:-1]) if a == "-C"), None)
        command = next((a for a in self.cmd[1 + len(PINNED_CONFIG) + (2 if where is not None else 0):]), "")
        shown = os.fsdecode(command) if isinstance(command, bytes) else command
        place = f" in {os.fsdecode(where)}" if where is not None else ""
        return f"git {shown}{place} failed (exit status {self.returncode}): {reason}"


def run_git(args: Sequence[str | bytes], top: str | bytes | None = None, *, extra_env: dict[str, str] | None = None,
            timeout: float = 60, cwd: str | os.PathLike | None = None, text: bool = False,
            check: bool = False, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """Run git as git_command builds it, with git_environment; output captured (bytes, or
    text with undecodable bytes replaced). With `check`, GitFailed where git exits non-zero;
    else raises what subprocess.run raises."""
    out = subprocess.run(git_command(args, top), capture_output=True, timeout=timeout, cwd=cwd, input=stdin,
                         env=git_environment(extra_env), **({"text": True, "errors": "replace"} if text else {}))
    if check and out.returncode != 0:
        raise GitFailed(out.returncode, out.args, out.stdout, out.stderr)
    return out


def _hidden_by_index_flags(top: str) -> tuple[list[bytes], list[bytes]]:
    """(skip-worktree, assume-unchanged) entries of the index whose file is in the work tree:
    git compares neither with its file, so a change there would be recorded as none. A
    skip-worktree entry without its file is one a sparse checkout left out, not a change."""
    out = run_git(["ls-files", "-v", "-z"], top, timeout=300, check=True).stdout
    skipped, assumed = [], []
    for field in (f for f in out.split(b"\0") if len(f) > 2):
        tag, name = field[:1], field[2:]
        if not os.path.lexists(os.path.join(os.fsencode(top), name)):
            continue
        if tag.upper() == b"S":
            skipped.append(name)
        if tag.islower():
            assumed.append(name)
    return skipped, assumed


@contextmanager
def content_index(top: str) -> Iterator[dict[str, str]]:
    """The environment for git to judge every tracked file of the checkout by its content:
    none where no index flag hides a file; else a scratch copy of the index with those
    flags cleared (the checkout's own index is not written)."""
    skipped, assumed = _hidden_by_index_flags(top)
    if not skipped and not assumed:
        yield {}
        return
    # git gives the index's path relative to the folder it ran in, `top`
    real = run_git(["rev-parse", "--git-path", "index"], top, check=True).stdout.rstrip(b"\n")
    with scratch_folder("sacscale-index-") as folder:
        env = {"GIT_INDEX_FILE": str(folder / "index")}
        shutil.copyfile(os.path.join(os.fsencode(top), real), env["GIT_INDEX_FILE"])
        for flag, names in (("--no-skip-worktree", skipped), ("--no-assume-unchanged", assumed)):
            if names:
                run_git(["update-index", flag, "-z", "--stdin"], top, stdin=b"\0".join(names), extra_env=env,
                        timeout=300, check=True)
        yield env
