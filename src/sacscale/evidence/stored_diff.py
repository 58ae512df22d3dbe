"""The set's stored diff (environment.json project.diff, source.diff) against the commit it
is recorded beside: the pipeline writes it as `git diff HEAD` of the checkout at that
commit (sacscale.pipeline.environment source_diff), so it applies to that commit's tree.
A diff that does not is another tree's change, put in with its size and hash rewritten:
the page's rebuild line (check the commit out, apply the diff) would not rebuild the code.

It is applied, with `git apply --check --cached`, to a scratch index read from the commit
(nothing in the checkout is written), where the git checkout this code runs from holds the
commit. Where it does not (a shallow clone, another repository, no git), a note says the
diff was not checked: the commit is then said to be missing elsewhere, never failed.

A tree recorded dirty holds a change, which its stored diff holds or lists as left out (a
large untracked file, a nested repository): an empty diff that lists nothing beside a dirty
tree cannot rebuild the code that ran."""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.code_history import CODE_ROOT, git_output, git_run, is_commit_id, is_shallow
from sacscale.evidence.shared_facts import opt
from sacscale.pipeline.recordable_checkout import NOT_SOURCE
from sacscale.scratch import scratch_folder


def _stored(root: Path, env: dict) -> Path | None:
    """The set's non-empty stored diff, where environment.json names one of the set's files."""
    name = opt(env, "project", "diff", "file")
    if not isinstance(name, str) or "/" in name or name.startswith("."):
        return None  # a name that is no file of the set is named by diff_findings
    path = root / name
    return path if path.is_file() and path.stat().st_size > 0 else None


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


def _outputs_only(project: dict) -> bool:
    """Every change the record lists is in a pipeline output folder (results/ ...): an older
    set's own folder made its checkout dirty while its code was as committed (the dirty flag
    counts only code since); the list must be whole (changed_count) to say so."""
    changed = project.get("changed_files")
    if not isinstance(changed, list) or not changed or project.get("changed_count") != len(changed):
        return False
    return all(isinstance(entry, str) and all(name.split("/", 1)[0] in NOT_SOURCE for name in entry.split(" -> "))
               for entry in changed)


def dirty_without_diff_problems(env: dict) -> list[str]:
    """A tree recorded dirty whose stored diff is empty and lists no file left out of it."""
    project, diff = opt(env, "project"), opt(env, "project", "diff")
    if not isinstance(project, dict) or project.get("dirty") is not True or not isinstance(diff, dict):
        return []
    if type(diff.get("bytes")) is not int or diff["bytes"] != 0 or diff.get("untracked_not_stored"):
        return []
    if _outputs_only(project):
        return []
    changed = project.get("changed_files")
    shown = ", ".join(map(str, changed[:3])) + (" ..." if len(changed) > 3 else "") \
        if isinstance(changed, list) and changed else "no file listed"
    return [f"set: code dirty: environment.json says True ({shown}), its stored diff {diff.get('file')} is empty "
            "(0 bytes) and lists no file left out of it: the commit and the diff cannot rebuild the code that ran "
            "(the pipeline's verify-env stores every change of a dirty tree)"]
