"""train_meta.json's fields derived from what lies beside it:

- `config.*`: every option the trainer records is what the run's command (run.json
  `command`) gives, parsed with that trainer's own parser and defaults (TrainConfig of the
  parsed command; the reference trainer's parsed options, its interpreter and meshes
  taken from the variables the run wrapper exported where the command leaves them out).
  Paths are compared as strings: the command and the record both hold them as the trainer
  got them where it ran, so where the set lies now does not enter (that `--model` is this
  set's hashed model and the run folder this run's are checked by records and binding);
  run.json `log_dir_while_running` is the command's `--log-dir` too;
- `devices[]` and `world_size`: the command's `--devices` as the trainer reads it;
- `start_time`/`end_time`: a start not after the end (binding keeps both inside run.json's
  window; run_end bounds how late the end and run.json's may be, run_start how early
  run.json's start may be);
- `nonfinite_rows_by_rank[]`, `nonfinite_targets`: the last `Faults/nonfinite_rows` and
  `Faults/nonfinite_targets` each rank's events hold (the trainer logs them at the last
  iteration, from the counters it records); `nonfinite_target_sources.*` count targets, so
  none exceeds `nonfinite_targets`;
- `final_learner_state_sha256_by_rank[]`: one hash a rank; all alike in a run that synced
  gradients (the trainer fails one whose ranks end apart); rank 0's is the hash of the
  learner state in `checkpoints/final.pt` where the set keeps it (a set made by the
  pipeline moves it out, run.json `learning_state` names where: then nothing derives it);
- `config.log_every`, `sittings[]` (count, `from_iteration`, `start_time`,
  `config.log_every`): each rank's event files, one a sitting (log_cadence).
- `config.num_envs`, `config.trace`, `sittings[].config.trace`: each phase time within its
  interval (phase_bounds), and the tags a sitting's events must hold (required_tags).
- the events' `Episode/*` values against what the trainer can log (episode_values).

Each is compared only where both sides are recorded; a current set (strict) must record
every option its trainer has."""

from __future__ import annotations

import struct
from dataclasses import asdict
from pathlib import Path

from sacscale.number_kinds import is_number
from sacscale.analysis.events import EventFileError, merge_event_parts, read_run_files
from sacscale.evidence.binding import first_record_time, run_event_files
from sacscale.evidence.copied_events import copied_rank_problems
from sacscale.evidence.episode_values import episode_value_problems
from sacscale.evidence.learner_start import first_learner_log, first_update_why
from sacscale.evidence.log_cadence import sitting_problems
from sacscale.evidence.logged_tags import learner_start_problems
from sacscale.evidence.phase_bounds import phase_time_problems
from sacscale.evidence.rank_events import rank_count_problems
from sacscale.evidence.required_tags import required_tag_problems
from sacscale.evidence.result import same_value
from sacscale.evidence.run_end import end_problems
from sacscale.evidence.run_start import start_problems
from sacscale.train.config import TrainConfig, TrainingError, syncs_gradients
from sacscale.trainers.reference_options import build_parser as reference_parser

# the reference trainer's options whose default is a variable the run wrapper exports
REFERENCE_OPTION_VARIABLES = {"reference_python": "SACSCALE_REFERENCE_PYTHON", "meshes": "SACSCALE_REFERENCE_MESHES"}
_FROM_VARIABLE = object()
FAULT_TAGS = ("Faults/nonfinite_rows", "Faults/nonfinite_targets")
FINAL_STATE = "checkpoints/final.pt"


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _reference_options(command: list, run: dict) -> dict:
    """The reference trainer's recorded options: its parsed command, with the options the
    command leaves to the wrapper's variables (run.json env_set) taken from them; one the
    wrapper did not export came from the running shell and is left out."""
    parser = reference_parser()
    parser.set_defaults(**{dest: _FROM_VARIABLE for dest in REFERENCE_OPTION_VARIABLES})
    options = vars(parser.parse_args(command[2:]))
    exported = run.get("env_set") if isinstance(run.get("env_set"), dict) else {}
    for dest, variable in REFERENCE_OPTION_VARIABLES.items():
        if options[dest] is not _FROM_VARIABLE:
            continue
        if variable not in exported:
            del options[dest]
        else:  # as reference_options reads them: an empty meshes variable is none
            options[dest] = (exported[variable] or None) if dest == "meshes" else exported[variable]
    return options | {"override": list(options["override"])}


def _command_devices(args, reference: bool) -> list[str]:
    if reference:  # train-reference: CUDA indices only, one rank each
        return [f"cuda:{int(d)}" for d in str(args.devices).split(",") if d.strip()]
    return TrainConfig(devices=args.devices).device_list()


def config_problems(name: str, meta: dict, run: dict, args, reference: bool, strict: bool) -> list[str]:
    """train_meta.json config.* and run.json log_dir_while_running against the command."""
    config = meta.get("config")
    if not isinstance(config, dict):
        return []
    given = _reference_options(run["command"], run) if reference else asdict(TrainConfig(**vars(args)))
    problems = []
    for key in sorted(set(config) | set(given)):
        if key in config and key in given:
            if not same_value(config[key], given[key]):
                problems.append(f"{name}: train_meta.json config.{key} {_shown(config[key])}, but the run's command "
                                f"(parsed with the trainer's parser and defaults) gives {_shown(given[key])}")
        elif strict and key in given and not (reference and key in REFERENCE_OPTION_VARIABLES):
            problems.append(f"{name}: train_meta.json config has no {key}, an option of the run's trainer")
        elif strict and key in config and not reference:
            problems.append(f"{name}: train_meta.json config.{key}: not an option of the run's trainer")
    while_running = run.get("log_dir_while_running")
    if while_running is not None and while_running != args.log_dir:
        problems.append(f"{name}: run.json log_dir_while_running {_shown(while_running)}, but the run's command "
                        f"gives --log-dir {_shown(args.log_dir)}")
    return problems


def device_problems(name: str, meta: dict, args, reference: bool) -> list[str]:
    """train_meta.json devices[] and world_size against the command's --devices."""
    try:
        devices = _command_devices(args, reference)
    except (TrainingError, ValueError) as exc:
        return [f"{name}: run.json command's --devices {_shown(args.devices)} does not parse ({exc})"]
    problems = []
    if "devices" in meta and not same_value(meta["devices"], devices):
        problems.append(f"{name}: train_meta.json devices {_shown(meta['devices'])}, but the run's command "
                        f"(--devices {args.devices}) gives {_shown(devices)}")
    if "world_size" in meta and not same_value(meta["world_size"], len(devices)):
        problems.append(f"{name}: train_meta.json world_size {_shown(meta['world_size'])}, but the run's command "
                        f"(--devices {args.devices}) gives {len(devices)} rank(s)")
    return problems


def window_problems(name: str, meta: dict) -> list[str]:
    """The trainer's start is not after its end (binding bounds each by run.json's window)."""
    start, end = meta.get("start_time"), meta.get("end_time")
    if is_number(start) and is_number(end) and start > end:
        return [f"{name}: train_meta.json start_time {start:.3f} is after its end_time {end:.3f}"]
    return []


def _as_logged(count: int) -> float:
    """A count as a TensorBoard scalar holds it (float32)."""
    return struct.unpack("f", struct.pack("f", float(count)))[0]


def _read_event_files(run_dir: Path) -> dict | None:
    """{rank: [(event file, {tag: [Scalar]})]} of the run, or None where they cannot be read
    (the metrics check names why) or a rank's are missing (named by the metrics check too)."""
    try:
        by_rank = read_run_files(run_dir)
    except EventFileError:
        return None
    return by_rank if list(by_rank) == list(range(len(by_rank))) else None


def _last_event(by_rank: dict | None) -> float | None:
    """The latest wall time of any rank's events."""
    times = [s.wall_time for series in (by_rank or {}).values() for values in series.values() for s in values]
    return max(times, default=None)


def _first_event(run_dir: Path) -> float | None:
    """The earliest first record of the run's event files (whichever trainer wrote them)."""
    times = [first_record_time(path) for path in run_event_files(run_dir)]
    return min((t for t in times if t is not None), default=None)


def _last_faults(by_rank: dict | None) -> dict[str, list[float]] | None:
    """{tag: [each rank's last value]} of the fault counters, or None where the events
    were not read or hold none (an older trainer's)."""
    if by_rank is None:
        return None
    last = {tag: [series[tag][-1].value if series.get(tag) else None for series in by_rank.values()]
            for tag in FAULT_TAGS}
    return None if all(v is None for values in last.values() for v in values) else last


def nonfinite_problems(name: str, meta: dict, by_rank_events: dict | None) -> list[str]:
    """nonfinite_rows_by_rank[] and nonfinite_targets against the events; the target
    sources against nonfinite_targets."""
    problems = []
    targets, sources = meta.get("nonfinite_targets"), meta.get("nonfinite_target_sources")
    if isinstance(targets, int) and isinstance(sources, dict):
        over = {k: v for k, v in sources.items() if not (isinstance(v, int) and 0 <= v <= targets)}
        if over:
            problems.append(f"{name}: train_meta.json nonfinite_target_sources {_shown(over)}: not counts of the "
                            f"{targets} non-finite target(s) (nonfinite_targets; a target counts once in each source)")
    by_rank = meta.get("nonfinite_rows_by_rank")
    if not (isinstance(by_rank, list) or "nonfinite_targets" in meta):
        return problems
    last = _last_faults(by_rank_events)
    if last is None:
        return problems
    rows, logged_targets = last[FAULT_TAGS[0]], last[FAULT_TAGS[1]]
    if isinstance(by_rank, list) and None not in rows and not _same_counts(by_rank, rows):
        problems.append(f"{name}: train_meta.json nonfinite_rows_by_rank {_shown(by_rank)}, but the ranks' events "
                        f"end with {FAULT_TAGS[0]} {_shown([int(v) for v in rows])}")
    if "nonfinite_targets" in meta and None not in logged_targets \
            and not _same_counts([targets], [sum(logged_targets)]):
        problems.append(f"{name}: train_meta.json nonfinite_targets {_shown(targets)}, but the ranks' events end "
                        f"with {FAULT_TAGS[1]} summing to {int(sum(logged_targets))}")
    return problems


def _same_counts(recorded: list, logged: list[float]) -> bool:
    return len(recorded) == len(logged) and all(
        isinstance(n, int) and not isinstance(n, bool) and _as_logged(n) == v for n, v in zip(recorded, logged))


def _kept_state_digest(run_dir: Path, run: dict) -> tuple[str | None, str | None]:
    """(the SHA-256 the trainer computes of the learner state in the run's kept
    checkpoints/final.pt, a problem reading it); (None, None) where the set does not keep
    that state (moved out, as run.json learning_state says, or never written)."""
    moved = (run.get("learning_state") or {}).get("sha256_by_file") if isinstance(run.get("learning_state"), dict) \
        else None
    path = run_dir / FINAL_STATE
    if (isinstance(moved, dict) and FINAL_STATE in moved) or not path.is_file():
        return None, None
    # torch: loaded only where a set keeps a full checkpoint (the pipeline's keep none)
    from sacscale.train.checkpoint import read_checkpoint
    from sacscale.train.record import state_digest

    try:
        state = read_checkpoint(path).get("learner_state")
    except TrainingError as exc:
        return None, f"{FINAL_STATE}: {exc}"
    if not isinstance(state, dict):
        return None, None  # a policy-only copy: the learning state is not in the set
    try:
        return state_digest(state), None
    except (AttributeError, TypeError, RuntimeError) as exc:
        return None, f"{FINAL_STATE}: its learner_state is not the trainer's tensors ({exc})"


def state_hash_problems(name: str, meta: dict, run: dict, run_dir: Path) -> list[str]:
    """final_learner_state_sha256_by_rank[]: a hash per rank, alike where the gradients
    were synced, rank 0's that of the kept checkpoint's learner state."""
    digests, world_size = meta.get("final_learner_state_sha256_by_rank"), meta.get("world_size")
    if not isinstance(digests, list):
        return []
    field = "train_meta.json final_learner_state_sha256_by_rank"
    if not all(isinstance(d, str) and len(d) == 64 and all(c in "0123456789abcdef" for c in d) for d in digests):
        return [f"{name}: {field} {_shown(digests)}: not one SHA-256 (64 hex digits) a rank"]
    problems = []
    if isinstance(world_size, int) and len(digests) != world_size:
        problems.append(f"{name}: {field} holds {len(digests)} hash(es), world_size is {world_size}")
    apart = [r for r, d in enumerate(digests) if d != digests[0]]
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    grad_sync = config.get("grad_sync")
    if apart and grad_sync in ("auto", "on") and meta.get("status") == "completed" \
            and syncs_gradients(TrainConfig(grad_sync=grad_sync), len(digests)):
        problems.append(f"{name}: {field}: rank(s) {apart} differ from rank 0's, but the run synced gradients "
                        f"(grad_sync {grad_sync}, {len(digests)} ranks) and completed: the trainer fails such a run")
    if digests:
        kept, problem = _kept_state_digest(run_dir, run)
        if problem:
            problems.append(f"{name}: {problem}")
        elif kept is not None and kept != digests[0]:
            problems.append(f"{name}: {field}[0] {digests[0][:12]}..., but the learner state in {FINAL_STATE} "
                            f"hashes to {kept[:12]}...")
    return problems


def learner_log_problems(name: str, meta: dict, files: dict | None) -> list[str]:
    """Each rank's learner tags against the first update its recorded config gives, in a run
    of one sitting (a resume records only its own sitting's config; sets hold none)."""
    config = meta.get("config")
    if "sittings" in meta or not files or first_learner_log(config) is None:
        return []
    for rank, rank_files in sorted(files.items()):
        if len(rank_files) == 1:  # more is the cadence check's to name
            found = learner_start_problems(rank_files[0][1], first_learner_log(config), first_update_why(config))
            if found:
                return [f"{name}: tb/rank{rank} {p}" for p in found]  # one rank shows it
    return []


def train_meta_problems(run_dir: Path, name: str, meta: dict, run: dict, args, reference: bool,
                        strict: bool) -> list[str]:
    """Every derivation above of one run's train_meta.json (none for a run without one)."""
    if not meta:
        return []
    problems = config_problems(name, meta, run, args, reference, strict)
    problems += device_problems(name, meta, args, reference) + window_problems(name, meta)
    files = None if reference else _read_event_files(run_dir)  # the reference's are in its own layout
    events = None if files is None else {r: merge_event_parts([part for _, part in f]) for r, f in files.items()}
    problems += start_problems(name, run, meta, _first_event(run_dir))
    problems += end_problems(name, run, meta, _last_event(events), reference)
    if not reference:  # the reference trainer records no counters or state hashes
        problems += nonfinite_problems(name, meta, events) + state_hash_problems(name, meta, run, run_dir)
        problems += rank_count_problems(name, meta, run_dir) + copied_rank_problems(name, events, meta.get("config"))
        problems += sitting_problems(name, meta, run, files) + learner_log_problems(name, meta, files)
        problems += phase_time_problems(name, meta, files) + required_tag_problems(name, meta, files, strict)
        problems += episode_value_problems(name, meta, files)
    return problems
