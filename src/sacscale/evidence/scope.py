"""What a run set's evidence covers: what is hashed, what is left out by design and why,
and the size budget of sets made from now on.

A set made under the budget carries `evidence.json` (hashed with the rest), written
before its manifest:

    {"format": 2, "budget_bytes": 4194304, "report_page": 1,
     "left_out": [{"path": "runs/X/checkpoints/final.pt", "sha256": "...", "bytes": 899625,
                   "why": "..."}]}

Its `format` is how verify and the budget test recognise a set made from now on; sets
without it predate the budget and stay as they were committed. A file left out is listed
with its hash, so the evaluation that used it is still bound to it (binding.py). Its
`report_page` is the page format of the report stage that made the set, which decides
whether verify compares the report's whole page (sacscale.report.page_format).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from datetime import datetime
from pathlib import Path

from sacscale.atomic import write_json
from sacscale.evidence.best_video import best_runs
from sacscale.evidence.manifest import MANIFEST_JSON, MANIFEST_NAME, VERIFY_JSON, sha256_file
from sacscale.output_owner import foreign_entry_problem
from sacscale.reading import TooLarge, loads_record, read_limited
from sacscale.report.page_format import PAGE_FORMAT

SCOPE_FILE = "evidence.json"
FORMAT = 2
# when the pipeline began to write evidence.json: every set whose runs started later carries
# one (its runs' start times are bound to their events), so a set without it is no older set
# but one whose evidence.json was removed, and with it the left-out files' hashes and the budget
FORMAT_SINCE = "2026-12-03T16:02:25+00:00"
BUDGET_BYTES = 4 * 1024 * 1024
# the page format of the report stage that made the set (sacscale.report.page_format); since
# PAGE_SINCE every set records one, so a set whose runs started later and records none had it removed
PAGE_KEY = "report_page"
PAGE_SINCE = "2026-12-05T01:55:00+00:00"
# since when the report stage writes each later page format (the commit that made it write it):
# a set whose runs started later records that format or a newer one, so one recording an older
# format was lowered, its page written again without what the newer one says (format 2: the
# metric names as text; format 3: a narrower probe in the first line)
PAGE_FORMAT_SINCE = {2: "2026-12-05T05:36:00+00:00", 3: "2026-12-05T17:14:00+00:00"}
POLICY = Path("checkpoints") / "final.pt"  # a run's policy: the one kind of file a set may leave out
# Never in the manifest, by construction (manifest.EXCLUDED): written from it, or after it.
BY_CONSTRUCTION = {
    MANIFEST_NAME: "the manifest itself",
    MANIFEST_JSON: "counts and sizes written from the manifest",
    VERIFY_JSON: "the verification's result, written after the manifest",
}


class ScopeError(ValueError):
    """evidence.json of the wrong shape; the message names the field."""


def read_scope(root: Path) -> dict | None:
    """evidence.json, or None for a set made before it. Raises ScopeError on a bad one."""
    path = Path(root) / SCOPE_FILE
    if not path.is_file():
        return None
    try:
        data = loads_record(read_limited(path, within=root).decode("utf-8"))
    except TooLarge as exc:
        raise ScopeError(f"{SCOPE_FILE}: {exc}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ScopeError(f"{SCOPE_FILE}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("format"), int):
        raise ScopeError(f"{SCOPE_FILE}: no integer field format")
    if isinstance(data["format"], bool) or data["format"] != FORMAT:
        # an older format is told by the file's absence; another number is no format this code knows
        raise ScopeError(f"{SCOPE_FILE}: format {str(data['format'])[:20]}, not this code's evidence format "
                         f"({FORMAT})")
    left = data.get("left_out", [])
    if not isinstance(left, list) or not all(
            isinstance(e, dict) and isinstance(e.get("path"), str) and isinstance(e.get("sha256"), str)
            for e in left):
        raise ScopeError(f"{SCOPE_FILE}: left_out must be a list of {{path, sha256, why}}")
    for i, entry in enumerate(left):
        for key in ("path", "sha256", "why"):
            value = entry.get(key, "")
            if not isinstance(value, str) or not value.isprintable():
                # verify prints them, one line each: a line break would write lines of its own
                raise ScopeError(f"{SCOPE_FILE}: left_out[{i}].{key} {str(value)[:40]!r} is not one line of "
                                 "printable text")
    page = data.get(PAGE_KEY, 1)
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise ScopeError(f"{SCOPE_FILE}: {PAGE_KEY} {str(page)[:40]!r} is not a page format (a whole number from 1)")
    budget = data.get("budget_bytes", BUDGET_BYTES)
    if isinstance(budget, bool) or not isinstance(budget, int) or not 0 < budget <= BUDGET_BYTES:
        # a budget is a number of bytes the project allows, not a value a set chooses for itself
        raise ScopeError(f"{SCOPE_FILE}: budget_bytes {str(budget)[:40]!r} is not a whole number of bytes in "
                         f"[1, {BUDGET_BYTES:,}]")
    return data


def format_of(root: Path) -> int:
    """The set's evidence format: 1 for a set made before evidence.json (or with a bad one,
    which check_scope names)."""
    try:
        scope = read_scope(root)
    except ScopeError:
        return 1
    return scope["format"] if scope else 1


def report_page_of(root: Path) -> tuple[int | None, str | None]:
    """(the report page format the set records, or None for a set made before sets recorded
    one; a problem): a set whose runs started after PAGE_SINCE without one had it removed,
    one whose runs started after a format's PAGE_FORMAT_SINCE recording an older one lowered it."""
    try:
        scope = read_scope(root)
    except ScopeError:
        return None, None  # named by check_scope
    if scope is not None and PAGE_KEY in scope:
        return scope[PAGE_KEY], _lowered_page_problem(root, scope[PAGE_KEY])
    late = started_since(root, PAGE_SINCE)
    if late:
        return None, (f"{SCOPE_FILE}: records no {PAGE_KEY}, though run {late[0]} started at {late[1]}, after every "
                      f"set began to record the format of its report's page ({PAGE_SINCE}): removed?")
    return None, None


def _lowered_page_problem(root: Path, page: int) -> str | None:
    """The problem of a page format older than the newest one the report stage wrote when the
    set's runs started (the newest such format named), or None."""
    for newer, since in sorted(PAGE_FORMAT_SINCE.items(), reverse=True):
        late = started_since(root, since) if page < newer else None
        if late:
            return (f"{SCOPE_FILE}: {PAGE_KEY} {page}, though run {late[0]} started at {late[1]}, after the report "
                    f"stage began to write page format {newer} ({since}): lowered?")
    return None


def left_out_hashes(root: Path) -> dict[str, str]:
    """{relative path: sha256} of the files left out of the set by design (none before the format)."""
    try:
        scope = read_scope(root)
    except ScopeError:
        return {}  # named by check_scope
    return {e["path"]: e["sha256"] for e in (scope or {}).get("left_out", [])}


def reports_of(root: Path) -> Path | None:
    return root.parent.parent / "reports" / root.name if root.parent.name == "results" else None


def tree_bytes(path: Path | None) -> int:
    """Bytes of the regular files under path (links are refused elsewhere, not followed here)."""
    if path is None or not path.is_dir():
        return 0
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def set_bytes(root: Path) -> int:
    """What committing the set adds: results/S and reports/S."""
    return tree_bytes(root) + tree_bytes(reports_of(root))


def budget_of(scope: dict) -> int:
    """A set's budget in bytes (read_scope has checked it)."""
    return scope.get("budget_bytes", BUDGET_BYTES)


def check_scope(root: Path) -> tuple[list[str], list[str]]:
    """(problems, lines for the output): a set of the budget's format within its budget, its
    left-out files listed with their hashes and absent from the set; an older set's size."""
    try:
        scope = read_scope(root)
    except ScopeError as exc:
        return [str(exc)], []
    if scope is None:
        late = started_since(root, FORMAT_SINCE)
        if late:
            return [f"{SCOPE_FILE}: missing, though run {late[0]} started at {late[1]}, after every set began to "
                    f"carry one ({FORMAT_SINCE}): removed?"], []
        return [], [f"size: {set_bytes(root):,} bytes in results/{root.name} and reports/{root.name}; no "
                    f"{SCOPE_FILE}: a set made before the {BUDGET_BYTES // 2**20} MB budget, kept as committed"]
    problems = []
    size = set_bytes(root)
    budget = budget_of(scope)
    if size > budget:
        problems.append(f"size: {size:,} bytes in results/{root.name} and reports/{root.name}, over the "
                        f"budget of {budget:,}")
    paths = [entry["path"] for entry in scope.get("left_out", [])]
    problems += [f"{SCOPE_FILE}: {p} is listed as left out more than once" for p in sorted(set(paths))
                 if paths.count(p) > 1]
    for entry in scope.get("left_out", []):
        parts = Path(entry["path"]).parts
        # only policies may be left out: everything else the verification recomputes from
        if len(parts) != 4 or parts[0] != "runs" or Path(*parts[2:]) != POLICY:
            problems.append(f"{SCOPE_FILE}: {entry['path']} is listed as left out; only a run's "
                            f"{POLICY.as_posix()} may be")
        elif (root / entry["path"]).exists():
            problems.append(f"{SCOPE_FILE}: {entry['path']} is listed as left out, but it is in the set")
    problems += _best_left_out(root, scope) + _cited_evaluations_missing(root, scope)
    return problems, [f"size: {size:,} bytes in results/{root.name} and reports/{root.name} "
                      f"(budget {budget:,}; format {scope['format']})"]


def _best_left_out(root: Path, scope: dict) -> list[str]:
    """The best run's policy is the one the report's video and its "best" claim rest on: the
    pipeline (`manifest --scope --keep-best`) always keeps it, so a set may not leave it out."""
    runs = {Path(e["path"]).parts[1]: e["path"] for e in scope.get("left_out", []) if len(Path(e["path"]).parts) == 4}
    best = best_runs(root, reports_of(root))
    return [f"{SCOPE_FILE}: {runs[run]} is listed as left out, but {run} is {why}: the set keeps the best "
            "run's policy (manifest --scope --keep-best)" for run, why in best.items() if run in runs]


# how leave_out_policies says that a left-out policy's evaluation still binds it
_CITED_EVALUATION = re.compile(r"eval/([^/]+)\.json records its hash")


def _cited_evaluations_missing(root: Path, scope: dict) -> list[str]:
    """A left-out policy whose entry says its run's evaluation records its hash needs that
    evaluation: with eval/ removed (and plan.json's evaluation switched off to match), the
    set still said the runs were evaluated, and nothing bound the policies it left out."""
    problems = []
    for entry in scope.get("left_out", []):
        parts = Path(entry["path"]).parts
        cited = _CITED_EVALUATION.search(entry["why"])
        if cited is None or len(parts) != 4:
            continue
        run, name = parts[1], cited.group(1)
        if name != run:
            problems.append(f"{SCOPE_FILE}: {entry['path']} is listed as left out because eval/{name}.json records "
                            f"its hash, the evaluation of another run than {run}")
        elif not (root / "eval" / f"{run}.json").is_file():
            problems.append(f"{SCOPE_FILE}: {entry['path']} is listed as left out because eval/{run}.json records "
                            f"its hash, but the set has no eval/{run}.json: the evaluation that binds the policy "
                            "was removed")
    return problems


def best_policy_to_move(root: Path, keep: set[str]) -> tuple[str, str] | None:
    """(run, what names it the best) of a best run (as verify judges it: _best_left_out) whose
    policy is in the set but not among the `keep` runs: leaving it out would fail the set's
    verification, so it is found before any policy moves."""
    for run, why in best_runs(root, reports_of(root)).items():
        if run not in keep and (root / "runs" / run / POLICY).is_file():
            return run, why
    return None


def started_since(root: Path, when: str) -> tuple[str, str] | None:
    """(run, started_at) of a run of the set that started after `when`, if any."""
    since = datetime.fromisoformat(when)
    for path in sorted((root / "runs").glob("*/run.json")):
        try:
            started = loads_record(read_limited(path).decode("utf-8")).get("started_at")
            if isinstance(started, str) and datetime.fromisoformat(started) >= since:
                return path.parent.name, started
        except (OSError, TooLarge, UnicodeDecodeError, ValueError, AttributeError, TypeError):
            continue  # an unreadable run record is named by the record checks
    return None


def size_line(root: Path) -> str | None:
    """One line on a set's size against its budget, for the end of a pipeline invocation (its
    verification runs before the report exists, so only this sees the whole set); None for a
    set without a budget."""
    try:
        scope = read_scope(root)
    except ScopeError:
        return None
    if scope is None:
        return None
    size = set_bytes(root)
    budget = budget_of(scope)
    if size > budget:
        return (f"size: {size:,} bytes with the report, OVER the budget of {budget:,}: `sacscale verify` "
                f"fails on it (docs/evidence.md)")
    return f"size: {size:,} bytes with the report (budget {budget:,})"


def describe(root: Path, files: int, bytes_hashed: int, manifest: Path) -> list[str]:
    """What verify checked and what it did not, by design: one line each. `manifest` is
    named as verify read it: by its name in the set, or by its path where it lies elsewhere."""
    against = manifest.name if manifest.parent == root else manifest
    lines = [f"hashed: {files} files, {bytes_hashed:,} bytes under {root} (against {against})"]
    for name, why in BY_CONSTRUCTION.items():
        lines.append(f"left out by design: {name} ({why})")
    reports = reports_of(root)
    if reports is not None and reports.is_dir():
        lines.append(f"left out by design: reports/{root.name}/ (it embeds this verification's verdict, so it "
                     f"cannot be in the manifest; its numbers are regenerated and compared instead)")
    try:
        scope = read_scope(root)
    except ScopeError:
        scope = None
    for entry in (scope or {}).get("left_out", []):
        lines.append(f"left out by design: {entry['path']} (sha256 {entry['sha256'][:12]}...; "
                     f"{entry.get('why', 'no reason recorded')})")
    moved = [p for p in root.glob("runs/*/run.json") if "learning_state" in _json_object(p)]
    if moved:
        lines.append(f"left out by design: the learning state (optimizer moments, replay) of {len(moved)} run(s): "
                     f"each run.json learning_state lists its files' hashes; the runs keep their policies")
    return lines


def _json_object(path: Path) -> dict:
    try:
        data = loads_record(read_limited(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# --- making a set of the current format ---------------------------------------------------------


class LeftOutTaken(ValueError):
    """A file already where a policy would be moved (--left-out-dir); nothing was moved."""


def leave_out_policies(root: Path, keep: set[str], dest: Path) -> list[dict]:
    """Move the policy of every run not in `keep` (runs no claim rests on: throughput runs)
    out of the set into dest/<run>/final.pt; the entries for evidence.json, with each
    file's hash, so that the run's evaluation stays bound to it. Every destination is
    judged before any policy moves, and each is placed before any leaves the set
    (LeftOutTaken: nothing moved)."""
    planned = []
    for run_dir in sorted(p for p in (root / "runs").glob("*") if p.is_dir() and not p.name.startswith(".")):
        policy = run_dir / POLICY
        if run_dir.name in keep or not policy.is_file() or policy.is_symlink():
            continue
        rel = (Path("runs") / run_dir.name / POLICY).as_posix()
        planned.append((run_dir.name, rel, policy, dest / run_dir.name / POLICY.name, sha256_file(policy)))
    recorded = left_out_hashes(root)
    for run, rel, _, target, digest in planned:
        _refuse_taken(target, run, {digest, recorded.get(rel)})
    placed = []
    try:
        for run, rel, policy, target, digest in planned:
            target.parent.mkdir(parents=True, exist_ok=True)
            if _place(policy, target, run, {digest, recorded.get(rel)}):
                placed.append(target)
    except LeftOutTaken:  # another set's file came after the check: the ones placed here are taken back
        for target in placed:
            target.unlink(missing_ok=True)
        raise
    entries = []
    for run, rel, policy, target, digest in planned:
        size = policy.stat().st_size
        policy.unlink()  # every policy is in its place: only now does the set lose them
        evaluated = (root / "eval" / f"{run}.json").is_file()
        entries.append({"path": rel, "sha256": digest, "bytes": size, "moved_to": _shown_path(target),
                        "why": "the policy of a run no claim rests on (a throughput run)"
                               + (f"; eval/{run}.json records its hash" if evaluated else "")})
    return entries


def _refuse_taken(target: Path, run: str, replaceable: set[str | None]) -> None:
    """LeftOutTaken where `target` holds something other than this policy (the same bytes)
    or this set's earlier left-out policy of the run (the hash its evidence.json records,
    of a run made again): sets' runs share names (every CPU set has cpu_r1_n2_cpu), so in
    a folder two sets share it is another set's policy, whose hash that set records."""
    if not os.path.lexists(target):
        return
    if problem := foreign_entry_problem(target):  # the same bytes or not, hers
        raise LeftOutTaken(f"{target}: {problem}")
    if target.is_file() and not target.is_symlink() and sha256_file(target) in replaceable:
        return
    raise LeftOutTaken(f"{target}: already there, and not this set's policy of {run} (another set's left-out "
                       "policy, in a folder two sets share?); nothing was moved: give each set a --left-out-dir "
                       "of its own (the pipeline's is logs/<set>/left_out)")


def _shown_path(path: Path) -> str:
    """Relative to the working directory (the repository's root in the pipeline) where it lies
    under it: a record names no machine's folders."""
    try:
        return Path(path).absolute().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def _place(src: Path, dst: Path, run: str, replaceable: set[str | None]) -> bool:
    """`src` also at `dst`, never over a file that is not this set's: the new name is made
    exclusively (a hard link, or across file systems a copy into a file made with O_EXCL),
    so a file another manifest put there after `_refuse_taken`'s check (two sets into one
    folder at once) fails it, and is judged again (LeftOutTaken) rather than replaced. One
    that is this set's own is replaced by a rename. True where `dst` is a new file."""
    try:
        _new_file(src, dst)
        return True
    except FileExistsError:
        _refuse_taken(dst, run, replaceable)
    spare = dst.with_name(f".{dst.name}.{os.getpid()}.{secrets.token_hex(4)}.moving")
    _new_file(src, spare)
    os.replace(spare, dst)
    return False


def _new_file(src: Path, dst: Path) -> None:
    """`dst` made new (FileExistsError where there is anything at it) with `src`'s bytes."""
    try:
        os.link(src, dst)
        return
    except FileExistsError:
        raise
    except OSError:  # another file system (logs/ may be elsewhere), or one without hard links
        pass
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        with open(src, "rb") as source, os.fdopen(fd, "wb") as copy:
            shutil.copyfileobj(source, copy)
            copy.flush()
            os.fsync(copy.fileno())
    except BaseException:
        dst.unlink(missing_ok=True)
        raise


def write_scope(root: Path, left_out: list[dict], budget: int = BUDGET_BYTES) -> dict:
    """evidence.json of the current format; entries already recorded (a rerun) are kept."""
    previous = read_scope(root) or {}
    merged = {e["path"]: e for e in previous.get("left_out", [])}
    merged.update({e["path"]: e for e in left_out})
    scope = {"format": FORMAT, "budget_bytes": budget, "left_out": [merged[k] for k in sorted(merged)]}
    # the page format of the report this code writes next; a set whose report is already
    # written (a manifest made again) keeps what it recorded, since that report is not rewritten
    reports = reports_of(root)
    written = reports is not None and (reports / "report.md").exists()
    if not written or PAGE_KEY in previous:
        scope[PAGE_KEY] = previous.get(PAGE_KEY, PAGE_FORMAT) if written else PAGE_FORMAT
    write_json(root / SCOPE_FILE, scope)
    return scope
