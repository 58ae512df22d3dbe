"""This code's git history, as verify reads it: the checkout the code runs from, asked with
git (nothing else reads git here). preset_record takes presets.yaml at the set's commit
from it; and where verify runs from a git checkout, the set's recorded commit (the page
tells its reader to check it out to rebuild the code) is looked up there. A commit the
checkout lacks is said in a note, not failed: a set made from commits not yet pushed, or
verified from another clone, is legitimate. A commit it holds is read for its committer
time (sacscale.evidence.recorded_commit compares it with the runs' start)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from sacscale.git_command import run_git

CODE_ROOT = Path(__file__).resolve().parents[3]  # the checkout this code runs from (src/sacscale/evidence/..)
GIT_TIMEOUT_S = 30


def git_run(args: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> tuple[int, str, str] | None:
    """(git's exit status, stdout, stderr), or None where git is missing or takes too long.
    git runs as sacscale.git_command pins it: no hook or program of the checkout's or the
    user's configuration, and no GIT_* variable of the caller's pointing it elsewhere."""
    # outside a repository: no other repository
    env = {"GIT_CEILING_DIRECTORIES": str(cwd.parent), **(extra_env or {})}
    try:
        done = run_git(args, cwd=cwd, extra_env=env, timeout=GIT_TIMEOUT_S, text=True)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode, done.stdout, done.stderr


def git_output(args: list[str], cwd: Path) -> str | None:
    """git's output, or None where git is missing, fails or takes too long."""
    done = git_run(args, cwd)
    return done[1] if done is not None and done[0] == 0 else None


def is_shallow(code_root: Path) -> bool:
    """A shallow clone, whose history stops short of most commits."""
    return git_output(["rev-parse", "--is-shallow-repository"], code_root) == "true\n"


# a commit id as git writes one (`git rev-parse HEAD`, all the pipeline records); only such
# a value is passed to git, so no recorded text reaches its command line as an option
COMMIT_ID = re.compile(r"[0-9a-f]{40}")


def is_commit_id(value) -> bool:
    return isinstance(value, str) and COMMIT_ID.fullmatch(value) is not None


def commit_time(commit: str, code_root: Path = CODE_ROOT) -> int | None:
    """The commit's committer time (Unix seconds), or None where this code's git checkout
    does not hold it (or it is no commit id, or there is no checkout)."""
    if not is_commit_id(commit):
        return None
    out = git_output(["show", "-s", "--format=%ct", f"{commit}^{{commit}}"], code_root)
    return int(out) if out is not None and out.strip().isdigit() else None


def commit_notes(commits: dict[str, str], code_root: Path = CODE_ROOT) -> list[str]:
    """A note for each recorded commit (commit: the field that records it) that the git
    checkout this code runs from lacks; none outside a git checkout."""
    wanted = {c: field for c, field in commits.items() if is_commit_id(c)}
    if not wanted or git_output(["rev-parse", "--git-dir"], code_root) is None:
        return []
    missing = [c for c in wanted if git_output(["cat-file", "-e", f"{c}^{{commit}}"], code_root) is None]
    if missing and is_shallow(code_root):
        return [f"{wanted[c]} {c}: not in this shallow clone's history (fetch it with --unshallow to check it out)"
                for c in missing]
    return [f"{wanted[c]} {c}: not in this checkout's repository (unpushed, or not this project's)" for c in missing]
