"""Does each run's evidence belong to that run? Checks that cannot be passed by copying
files between runs and regenerating everything derived with the project's own commands.

- events: every event file of a run was created by that run's process. TensorBoard names
  each file `events.out.tfevents.<creation second>.<host>.<pid>.<n>` and its first record
  carries the creation time (its file-version event, within the second the name gives, and
  in a set of the current format required); both must fall inside the run's wall-clock window
  (`run.json` `start_time`..`end_time`, and the trainer's own window in
  `train_meta.json` inside it), the host must be the run's (`run.json` `host`), no two runs
  may share an event file (by name, by process, or by content), no rank of one run may
  share most values or step-to-step turns of a measured tag with a rank of another
  (sacscale.evidence.copied_events: a copy with its wall times moved, values changed, scaled
  or moved to other steps), and the run's record must name the
  run whose directory holds it.
- evaluations: `eval/<run>.json` must evaluate that run's policy (its path, and its hash
  against the set's copy of the policy or the hash recorded when the policy was left out
  by design) on the set's model (the hash the evaluation records, and the one the policy
  was trained on), at the run's last iteration; its summary agrees with its own parts
  (sacscale.evidence.eval_record, eval_stand_still), its protocol with the code and the
  pipeline (eval_protocol), its env steps and observation with its run's (eval_run).

A set whose records predate a field is not failed for its absence: verify says so in
its notes. A set of the current format must carry every field.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from sacscale.number_kinds import is_number
from sacscale.analysis.events import EVENT_FILE_LIMIT
from sacscale.evidence.eval_protocol import planned_size_problems, protocol_problems, shared_problems
from sacscale.evidence.eval_record import evaluation_problems
from sacscale.evidence.eval_run import run_findings
from sacscale.evidence.eval_stand_still import stand_still_problems
from sacscale.evidence.manifest import sha256_file
from sacscale.evidence.recorded_commit import epoch_seconds, utc_text
from sacscale.evidence.reference_copies import any_run_values, copied_any_run_problems
from sacscale.evidence.result import same_value
from sacscale.reading import loads_record, read_limited
from sacscale.usage import SILENT, StageLines

EVENT_PREFIX = "events.out.tfevents."
# a file name holds whole seconds: its creation second may precede a window that starts
# within that second
NAME_SLACK_S = 1.0
# TensorBoard's writer reads the clock for the file's name (whole seconds, rounded down), opens
# the file and starts its writer thread, then reads the clock again for the first record: over
# the committed sets' 114 event files that record is 0.06 to 0.98 s after the name's second. The
# slack allows the open and the thread's start on a loaded machine; a record later than written
# only narrows the first interval's bound, so it gives an edit no room
OPEN_SLACK_S = 0.5
# environment.json recorded_at holds whole seconds, rounded down, so a run started after the
# recording never starts before it; the second allows a clock step on the host between them
RECORDED_SLACK_S = 1.0


@dataclass(frozen=True)
class EventName:
    created: int
    host: str
    pid: int


def parse_event_name(name: str) -> EventName | None:
    """TensorBoard's `events.out.tfevents.<secs>.<host>.<pid>.<n>[.gz]`; None if not so named.
    The host may hold dots, so it is everything between the first and the last two fields."""
    if not name.startswith(EVENT_PREFIX):
        return None
    rest = name[len(EVENT_PREFIX):].removesuffix(".gz").split(".")
    if len(rest) < 4 or not (rest[0].isdigit() and rest[-2].isdigit() and rest[-1].isdigit()):
        return None
    return EventName(int(rest[0]), ".".join(rest[1:-2]), int(rest[-2]))


@dataclass(frozen=True)
class FirstRecord:
    kind: str | None  # the event's kind: TensorBoard's writer opens every file with a file_version event
    wall_time: float | None  # None when the record carries none


def first_record(path: Path) -> FirstRecord | None:
    """The file's first record (TensorBoard writes its file-version event when it creates the
    file), or None when it cannot be read: the metrics check reads every record with its
    checksums and names a damaged file, so this one only needs the first."""
    # tensorboard's protobuf classes: a heavy import, only where event files are opened
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto import event_pb2

    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            header = fh.read(12)  # uint64 length, uint32 masked CRC of the length
            if len(header) != 12:
                return None
            (length,) = struct.unpack("<Q", header[:8])
            if length > 1 << 20:  # a first record is a few dozen bytes
                return None
            event = event_pb2.Event.FromString(fh.read(length))
    except (OSError, EOFError, zlib.error, ValueError, struct.error, DecodeError):
        return None
    return FirstRecord(event.WhichOneof("what"), float(event.wall_time) if event.wall_time else None)


def first_record_time(path: Path) -> float | None:
    """The wall time of the file's first record, or None when it cannot be read or carries none."""
    record = first_record(path)
    return record.wall_time if record is not None else None


def run_event_files(run_dir: Path) -> list[Path]:
    """Every event file in the run's directory, whichever trainer wrote it. The tree was
    checked to hold no links, so this walk stays inside the set."""
    return sorted(p for p in run_dir.rglob(EVENT_PREFIX + "*") if p.is_file())


class Findings:
    """Problems and notes of one check, handed back to the verification."""

    def __init__(self, strict: bool):
        self.strict = strict
        self.problems: list[str] = []
        self.notes: list[str] = []

    def absent(self, text: str) -> None:
        """A binding field the record does not carry: fails a current set, a note otherwise."""
        (self.problems if self.strict else self.notes).append(text)


# --- events -------------------------------------------------------------------------------

def _window(record: dict) -> tuple[float, float] | None:
    start, end = record.get("start_time"), record.get("end_time")
    return (float(start), float(end)) if is_number(start) and is_number(end) else None


def check_run_identity(name: str, run: dict, out: Findings) -> None:
    """The record names the run whose directory holds it."""
    for field, value in (("run", run.get("run")),
                         ("resolved_config.run", (run.get("resolved_config") or {}).get("run"))):
        if value is None:
            out.absent(f"{name}: run.json {field}: not recorded by this older set, so the record is not bound "
                       f"to its directory by name")
        elif value != name:
            out.problems.append(f"{name}: run.json {field} is {value!r}: the record is another run's")
    run_dir = run.get("run_dir")
    if isinstance(run_dir, str) and Path(run_dir).name != name:
        out.problems.append(f"{name}: run.json run_dir {run_dir!r} is another run's directory")


def check_trainer_window(name: str, window: tuple[float, float], meta: dict, out: Findings) -> None:
    """The trainer's own window (train_meta.json) lies inside the run record's."""
    inner = _window(meta)
    if inner is None:
        out.absent(f"{name}: train_meta.json start_time/end_time: not recorded by this older set")
        return
    if inner[0] < window[0] or inner[1] > window[1]:
        out.problems.append(f"{name}: train_meta.json's window {inner[0]:.3f}..{inner[1]:.3f} is not inside "
                            f"run.json's {window[0]:.3f}..{window[1]:.3f}: the trainer's record is another run's")


def check_event_file(name: str, rel: str, path: Path, window: tuple[float, float] | None, host: str | None,
                     out: Findings) -> EventName | None:
    """One event file against its run's window and host; its parsed name."""
    parsed = parse_event_name(path.name)
    if parsed is None:
        out.problems.append(f"{name}: {rel}: not named as TensorBoard names event files "
                            f"(events.out.tfevents.<secs>.<host>.<pid>.<n>): it cannot be bound to the run")
        return None
    if host is not None and parsed.host != host:
        out.problems.append(f"{name}: {rel}: written on host {parsed.host!r}, the run ran on {host!r}")
    if window is None:
        return parsed
    start, end = window
    if not start - NAME_SLACK_S <= parsed.created <= end:
        out.problems.append(f"{name}: {rel}: created at {parsed.created} (its name), outside the run's "
                            f"window {start:.3f}..{end:.3f}: another run's events")
    first = check_first_record(name, rel, path, parsed, out)
    if first is not None and not start <= first <= end:
        out.problems.append(f"{name}: {rel}: its first record is from {first:.3f}, outside the run's "
                            f"window {start:.3f}..{end:.3f}: another run's events")
    return parsed


def check_first_record(name: str, rel: str, path: Path, parsed: EventName, out: Findings) -> float | None:
    """The file's first record is the file-version event TensorBoard's writer opens it with, its
    wall time the file's creation, from the second its name gives: that time bounds the run's
    first interval (sacscale.evidence.phase_bounds), so a record without it, or moved away from
    the name, would leave that bound to the looser start_time. Its wall time, when it has one."""
    record = first_record(path)
    fault = _first_record_fault(record)
    if fault is not None:
        out.absent(f"{name}: {rel}: its first record {fault}, not the file-version event with the file's "
                   f"creation time that TensorBoard's writer opens every event file with: the file was edited, "
                   f"and the run's first interval is not bound to its creation")
        return record.wall_time if record is not None else None
    if not parsed.created <= record.wall_time < parsed.created + NAME_SLACK_S + OPEN_SLACK_S:
        out.problems.append(f"{name}: {rel}: its first record is from {record.wall_time:.3f}, its name gives its "
                            f"creation second {parsed.created}: TensorBoard's writer writes that record in that "
                            f"second, at most {NAME_SLACK_S + OPEN_SLACK_S:g} s after its start: the record or the "
                            f"name was edited")
    return record.wall_time


def _first_record_fault(record: FirstRecord | None) -> str | None:
    """What keeps a first record from being the writer's file-version event with its time."""
    if record is None:
        return "cannot be read"
    if record.kind != "file_version":
        return f"is a {record.kind or 'blank'} event"
    return "carries no wall time" if record.wall_time is None else None


def check_events(root: Path, runs: list[str], out: Findings, order: list | None = None,
                 progress: StageLines = SILENT, set_start: float | None = None) -> None:
    """Every run's event files against its record, and no event file in two runs; with
    `order` (plan.json's execution order), the runs' windows in that order; with `set_start`
    (set_recorded_at), each window after it."""
    seen_name: dict[str, str] = {}
    seen_process: dict[tuple[str, int], str] = {}
    seen_digest: dict[str, str] = {}
    windows: dict[str, tuple[float, float]] = {}
    measured: dict = {}
    for done, name in enumerate(runs, 1):
        progress.item(f"run {done}/{len(runs)}: {name}")
        run_dir = root / "runs" / name
        files = run_event_files(run_dir)
        window, host = _run_window_and_host(name, run_dir, out, windows)
        check_started_after(name, window, set_start, out)
        processes = set()
        for path in files:
            rel = path.relative_to(root).as_posix()
            parsed = check_event_file(name, rel, path, window, host, out)
            _once(seen_name, path.name, name, f"{rel}: the same event file name is in run", out)
            if path.stat().st_size <= EVENT_FILE_LIMIT:  # a larger one is named by the metrics check, not read
                _once(seen_digest, sha256_file(path), name, f"{rel}: the same event file content is in run", out)
            if parsed is not None and window is not None:
                processes.add((parsed.host, parsed.pid))
        # a recorded run is one trainer process per rank: no process writes two of them (tests
        # and hand-made sets, which record no window, may write every run from one process)
        for process in processes:
            _once(seen_process, process, name, f"events of process {process[1]} on {process[0]!r} are also in run",
                  out)
        if files:
            measured[name] = any_run_values(run_dir, (_load(run_dir / "train_meta.json") or {}).get("config"))
    out.problems.extend(copied_any_run_problems(measured, root / "runs"))
    check_windows_apart(windows, out)
    if isinstance(order, list):
        check_windows_in_order(windows, order, out)


def _run_window_and_host(name: str, run_dir: Path, out: Findings,
                         windows: dict[str, tuple[float, float]]) -> tuple[tuple[float, float] | None, str | None]:
    """The run's wall-clock window and host from its run.json, bound to its identity and to
    the trainer's own window (then kept in `windows`); what an older set does not record is noted."""
    run = _load(run_dir / "run.json")
    if run is None:
        out.absent(f"{name}: run.json: not recorded by this older set, so its events are not bound to a "
                   f"run record")
        return None, None
    check_run_identity(name, run, out)
    window = _window(run)
    if window is None:
        out.absent(f"{name}: run.json start_time/end_time: not recorded by this older set, so its events "
                   f"are not bound to its wall-clock window")
    host = (run.get("host") or {}).get("name") if isinstance(run.get("host"), dict) else None
    if host is None:
        out.absent(f"{name}: run.json host: not recorded by this older set, so its events are not bound "
                   f"to its host")
    meta = _load(run_dir / "train_meta.json")
    if window is not None and meta is not None:
        check_trainer_window(name, window, meta, out)
        windows[name] = window
    elif window is not None:
        out.absent(f"{name}: train_meta.json: not recorded by this older set, so the trainer's window is not "
                   f"bound to the run's")
    return window, host


def set_recorded_at(root: Path) -> float | None:
    """When the set's environment was recorded (environment.json recorded_at), None where the
    set has none in a form that gives a time (sacscale.evidence.recorded_time names that)."""
    env = _load(root / "environment.json")
    return epoch_seconds(env.get("recorded_at")) if env is not None else None


def check_started_after(name: str, window: tuple[float, float] | None, set_start: float | None,
                        out: Findings) -> None:
    """The pipeline records the environment before the plan's probe and every run, and a new
    recording trains every run again, so each run's window starts after it (the records check
    that it was recorded on the run's host, one clock): a run that started before was trained
    at another time, another set's."""
    if window is None or set_start is None or window[0] >= set_start - RECORDED_SLACK_S:
        return
    out.problems.append(f"{name}: run.json's window starts at {window[0]:.3f} ({utc_text(window[0])}), "
                        f"{set_start - window[0]:.0f} s before this set's environment was recorded "
                        f"({utc_text(set_start)}, environment.json recorded_at): the pipeline starts every run "
                        f"after that, so this run was trained at another time or for another set")


def check_windows_in_order(windows: dict[str, tuple[float, float]], order: list, out: Findings) -> None:
    """The pipeline starts each run after the one before it in the plan's execution order
    (a failed one is run again before the next), so the windows follow that order: a run
    trained at another time (another set's, put here under this name) does not."""
    planned = [name for name in order if name in windows]
    ran = sorted(planned, key=lambda name: windows[name][0])
    for position, (want, got) in enumerate(zip(planned, ran)):
        if want != got:
            out.problems.append(f"{got}: ran as run {position + 1} of this set (run.json's window), plan.json's "
                                f"execution order has {want} there: a run trained at another time or for another set")
            return


def check_windows_apart(windows: dict[str, tuple[float, float]], out: Findings) -> None:
    """The runs of a set ran one at a time, so their windows do not overlap: a record whose
    window was edited to fit events copied from another run overlaps that run's."""
    ordered = sorted(windows.items(), key=lambda item: item[1])
    for (a, (_, a_end)), (b, (b_start, _)) in zip(ordered, ordered[1:]):
        if b_start < a_end:
            out.problems.append(f"{b}: run.json's window starts at {b_start:.3f}, before run {a}'s ends "
                                f"({a_end:.3f}): runs of a set run one at a time")


def _once(seen: dict, key, run: str, what: str, out: Findings) -> None:
    other = seen.setdefault(key, run)
    if other != run:
        out.problems.append(f"{run}: {what} {other}: events copied between runs")


def _load(path: Path) -> dict | None:
    try:
        data = loads_record(read_limited(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# --- evaluations ----------------------------------------------------------------------------

def check_evaluation(root: Path, file: str, name: str, ev: dict, model_sha: str | None, iterations: int | None,
                     left_out: dict[str, str], out: Findings) -> None:
    """eval/<file> evaluates run `name`'s own policy on the set's model."""
    rel = f"eval/{file}"
    policy_rel = _policy_of(ev.get("checkpoint"), name)
    if policy_rel is None:
        out.problems.append(f"{rel}: evaluates {ev.get('checkpoint')!r}, not runs/{name}/checkpoints/: "
                            f"not this run's policy")
        return
    check_evaluation_model(rel, ev, model_sha, out)
    recorded = ev.get("checkpoint_sha256")
    if not isinstance(recorded, str):
        out.absent(f"{rel}: checkpoint_sha256: not recorded by this older set, so the evaluation is not bound "
                   f"to a policy by its hash or its iteration")
        return
    if iterations is not None and is_number(ev.get("iteration")) and not same_value(ev["iteration"], iterations):
        out.problems.append(f"{rel}: evaluated the policy of iteration {ev['iteration']}, the run's last is "
                            f"{iterations}")
    if (root / policy_rel).is_file():
        actual = sha256_file(root / policy_rel)
        if actual != recorded:
            out.problems.append(f"{rel}: evaluated a policy hashing {recorded[:12]}..., {policy_rel} hashes to "
                                f"{actual[:12]}...: not this run's policy")
    elif policy_rel in left_out:
        if left_out[policy_rel] != recorded:
            out.problems.append(f"{rel}: evaluated a policy hashing {recorded[:12]}..., the policy left out of "
                                f"the set hashed {left_out[policy_rel][:12]}...")
    else:  # a set made before left-out files were recorded did not always commit its policies
        out.absent(f"{rel}: the evaluated policy {policy_rel} is not in the set, and the set does not record "
                   f"it as left out (not recorded by this older set): its hash {recorded[:12]}... is not checked")


def _policy_of(checkpoint, run: str) -> str | None:
    """The set-relative path of the policy an evaluation names: runs/<run>/checkpoints/<file>,
    or a run directory (evaluate takes one: its checkpoints/final.pt). None when the path
    names another run's policy or no policy at all."""
    if not isinstance(checkpoint, str):
        return None
    parts = Path(checkpoint).parts
    if parts and parts[-1] == run:
        return f"runs/{run}/checkpoints/final.pt"
    if len(parts) >= 3 and parts[-3] == run and parts[-2] == "checkpoints":
        return f"runs/{run}/checkpoints/{parts[-1]}"
    return None


def check_evaluation_model(rel: str, ev: dict, model_sha: str | None, out: Findings) -> None:
    """The model the evaluation ran, and the one the policy was trained on, are the set's."""
    if model_sha is None:
        return
    protocol = ev.get("protocol") if isinstance(ev.get("protocol"), dict) else {}
    for field in ("model_sha256", "checkpoint_model_sha256"):
        value = protocol.get(field)
        if value is None:
            out.absent(f"{rel}: protocol.{field}: not recorded by this older set")
        elif value != model_sha:
            out.problems.append(f"{rel}: protocol.{field} {str(value)[:12]}..., the set's model is "
                                f"{model_sha[:12]}...")


def check_evaluations(root: Path, runs: list[str], model_sha: str | None, iterations: int | None,
                      left_out: dict[str, str], out: Findings, by_name: bool = True, plan: dict | None = None,
                      progress: StageLines = SILENT) -> None:
    """Every eval/*.json evaluates the policy of a run of the set. `by_name` (sets made by
    the pipeline): eval/<run>.json must be run <run>'s; hand-made sets may hold several
    evaluations of one run under other names, each still bound by its checkpoint path.
    `plan`: the set's plan.json, whose evaluation size every evaluation ran with."""
    eval_dir = root / "eval"
    if not eval_dir.is_dir():
        return
    read: dict[str, dict] = {}
    evaluations = sorted(eval_dir.glob("*.json"))
    progress.stage(f"checking {len(evaluations)} evaluations in eval/ against the runs' policies")
    for done, path in enumerate(evaluations, 1):
        progress.item(f"evaluation {done}/{len(evaluations)}: {path.name}")
        ev = _load(path)
        if ev is None:
            out.problems.append(f"eval/{path.name}: not a JSON object")
            continue
        name = path.stem if by_name else _evaluated_run(ev)
        if name not in runs:
            out.problems.append(f"eval/{path.name}: evaluates {name}, which is not a run of this set")
            continue
        rel = f"eval/{path.name}"
        read[rel] = ev
        check_evaluation(root, path.name, name, ev, model_sha, iterations, left_out, out)
        out.problems += evaluation_problems(rel, ev) + stand_still_problems(rel, ev)
        out.problems += protocol_problems(rel, ev, pipeline=by_name)
        against_run = run_findings(rel, ev, _load(root / "runs" / name / "train_meta.json"))
        out.problems += against_run.problems
        out.notes += against_run.notes
        for text in against_run.unrecorded:
            out.absent(text)
    if by_name:  # the pipeline evaluates every run of a set alike
        out.problems += shared_problems(read)
    if by_name and isinstance(plan, dict) and read:
        problems, notes = planned_size_problems(read, plan)
        out.problems += problems
        out.notes += notes


def _evaluated_run(ev: dict) -> str | None:
    """The run whose policy an evaluation names: runs/<run>/checkpoints/<file>."""
    checkpoint = ev.get("checkpoint")
    parts = Path(checkpoint).parts if isinstance(checkpoint, str) else ()
    if len(parts) >= 3 and parts[-2] == "checkpoints":
        return parts[-3]
    return parts[-1] if parts else None
