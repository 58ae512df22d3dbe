"""The Environment list's "project commit" line: the commit the code was at and whether it
differed from it (with the stored diff that rebuilds it), or that no commit identifies it.

environment.json records the git state of the code (sacscale.pipeline.environment
git_state): a checkout (`repository: true`) with its commit and dirty flag, or code imported
from outside any checkout (`repository: false`; null where git is not installed) with
neither. Only a checkout's commit names the code; "clean" is said only where the record
says the checkout did not differ from it."""

from __future__ import annotations

from sacscale.report.text import code, plain

_STATE = {True: " (uncommitted changes)", False: " (clean)"}

# how the record lists an untracked link to a folder (sacscale.pipeline.environment.source_diff)
LINKED_FOLDER = "a link to the folder "


def _fmt_int(v) -> str:
    return f"{v:,}" if isinstance(v, int) else str(v)


def _from_a_checkout(project: dict) -> bool:
    """A record without `repository` (none written so) is taken at its commit."""
    return "repository" not in project or project["repository"] is True


def _unidentified(project: dict) -> str:
    if _from_a_checkout(project):
        why = project.get("error") or "the checkout recorded no commit"
    else:
        why = project.get("error") or "not imported from a git checkout"
    return f"none: the code is not identified by a commit ({plain(why)})"


def _with_diff(project: dict) -> str:
    """The stored diff that rebuilds a dirty checkout's code from its commit."""
    diff = project.get("diff") or {}
    if not diff.get("file"):
        return "; no diff was stored (a set made before diffs were recorded)"
    rebuild = f"git checkout {str(project['commit'])[:12]} && git apply --binary {diff['file']}"
    text = (f" plus the stored diff ({code(diff['file'])}, {plain(_fmt_int(diff.get('bytes', 0)))} "
            f"bytes, sha256 {code(str(diff.get('sha256', ''))[:12] + '…')}; "
            f"rebuild the code: {code(rebuild)})")
    listed = diff.get("untracked_not_stored") or []
    why = [str(entry["why"]) for entry in listed if isinstance(entry, dict) and "why" in entry]
    links = sum(1 for reason in why if reason.startswith(LINKED_FOLDER))
    nested = len(why) - links
    if large := len(listed) - len(why):
        text += f"; {large} large untracked file(s) listed in the record by size and SHA-256, not stored"
    if nested:
        text += f"; {nested} nested git repositor{'y' if nested == 1 else 'ies'} listed in the record, not stored"
    if links:
        text += f"; {links} link(s) to folders outside the code listed in the record, not stored"
    return text


def commit_line(project: dict) -> str:
    """What follows "project commit: " on the page."""
    if not project.get("commit") or not _from_a_checkout(project):
        return _unidentified(project)
    dirty = project.get("dirty")
    state = _STATE.get(dirty, "") if isinstance(dirty, bool) else " (whether it differed from the commit: not recorded)"
    line = code(project["commit"]) + state
    return line + _with_diff(project) if dirty is True else line
