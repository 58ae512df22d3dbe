"""The fields this code always writes in the records verify derives from: in a set made by
this code (the plan records its schedule and evidence.json this code's evidence format)
each must be there, since a derivation skips a field it does not find, and with it the
check of what lies beside it (an absent `nonfinite_rows_by_rank` would leave
`nonfinite_rows` on the page unchecked). An older set may lack them (its records were
written by older code), and keeps its notes.

A key path is dict keys joined by `.`; its value may be anything, `null` included (the
run wrapper writes `host.slurm` and `learning_state` as null where there is nothing to
say); the keys below a path are checked by the derivations of that path. Every key of the
records of the committed current sets is named below, as required or as not
(tests/evidence/test_required_fields.py), so a field added later needs its answer here."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sacscale.evidence.result import EvidenceStructureError, load_json

RUN = "runs/<run>/run.json"
META = "runs/<run>/train_meta.json"
EVAL = "eval/<run>.json"


def _under(prefix: str, *names: str) -> tuple[str, ...]:
    return tuple(f"{prefix}.{name}" for name in names)


_SCORES = ("normalised_tracking.lin_vel_xy", "normalised_tracking.yaw_rate", "rms_error.lin_vel_xy",
           "rms_error.yaw_rate", "rms_error.yaw_rate_pelvis", "fall_rate", "episodes", "samples")

REQUIRED: dict[str, tuple[str, ...]] = {
    # the run wrapper (sacscale.pipeline.run_record), for either trainer
    RUN: ("run", "status", "exit_status", "timed_out", "interrupted_by", "timeout_s", "command", "command_line",
          "log_dir_while_running", "run_dir", "env_set", "seed", "resolved_config", "code.commit", "code.dirty",
          "started_at", "ended_at", "start_time", "end_time", "duration_s", "python", "host.name", "host.slurm",
          # the pipeline always passes --state-dir: null where nothing was moved
          "learning_state"),
    # sacscale train (sacscale.train.record)
    META: ("config", "world_size", "devices", "collector_pools.pools",
           "collector_pools.learner_cpus", "collector_pools.how", "collector_pools.learner_affinity", "torch",
           "python", "start_time", "status", "end_time", "rank0_env_steps", "final_learner_state_sha256_by_rank",
           "ranks_identical"),
    # sacscale evaluate (sacscale.eval.evaluate)
    EVAL: ("checkpoint", "checkpoint_sha256", "iteration", "env_steps",
           *_under("protocol", "commands", "envs_per_command", "num_envs", "seconds", "control_dt", "steps",
                   "settle_s", "settle_steps", "seed", "sim_threads", "torch_threads", "actions", "noise_scale",
                   "tilt_obs", "noise_joint_pos", "noise_joint_vel", "kp_range", "kd_range", "velocity", "falls",
                   "model", "model_sha256", "checkpoint_model_sha256"),
           *_under("overall", *_SCORES), "action_std_mean", "per_command",
           *_under("baseline_stand_still.overall", *_SCORES), "baseline_stand_still.per_command",
           *_under("ratio_to_stand_still", "lin_vel_xy", "yaw_rate", "yaw_rate_pelvis"), "sim_errors",
           "timing.wall_s"),
}

# in each entry of these per-command parts of an evaluation record: the counts that hold its
# scores (sacscale.evidence.eval_entries names an entry's bound only where they are there)
ENTRY_PARTS = ("per_command", "baseline_stand_still.per_command")
ENTRY_FIELDS = ("fall_rate", "episodes", "samples")

# train_meta.json of the reference trainer (sacscale train-reference): its own record, with
# no counters, pools or state hashes
REFERENCE_META = ("config", "world_size", "devices", "start_time", "status", "end_time")

# written by this code only for runs that started after it began to (the time of the commit
# that began writing each): sets of this evidence format made before lack them (h200x1_shared,
# h200x1_shared_short; h200x1_learning_lowent made current by the tests), so each is required
# of a run that started since
SINCE: dict[str, dict[str, str]] = {
    RUN: {"events_compressed": "2026-12-04T03:18:46+00:00"},  # the wrapper compresses the events
    META: {"nonfinite_target_sources": "2026-12-04T19:26:58+00:00",  # the learner counts them by source
           # the replay drops non-finite rows and counts them; the trainer records which losses compiled
           "nonfinite_rows": "2026-12-03T16:06:59+00:00", "nonfinite_targets": "2026-12-03T16:06:59+00:00",
           "nonfinite_rows_by_rank": "2026-12-03T19:15:26+00:00", "losses_compiled": "2026-12-03T19:15:26+00:00"},
}

# written by this code, not required: why
NOT_REQUIRED: dict[str, dict[str, str]] = {
    META: {"env_steps_accounting": "prose, which nothing derives"},
}


def _present(record: dict, path: str) -> bool:
    value = record
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return False
        value = value[key]
    return True


def _started(run: dict) -> datetime | None:
    try:
        started = datetime.fromisoformat(run["started_at"])
    except (KeyError, TypeError, ValueError):
        return None  # required above: named there
    return started if started.utcoffset() is not None else None  # without its offset: named by the records


def _required(kind: str, run: dict, reference: bool) -> list[str]:
    if kind == META and reference:
        return list(REFERENCE_META)
    started = _started(run)
    later = [path for path, since in SINCE.get(kind, {}).items()
             if started is not None and started >= datetime.fromisoformat(since)]
    return [*REQUIRED[kind], *later]


def _part(record: dict, path: str):
    for key in path.split("."):
        record = record.get(key) if isinstance(record, dict) else None
    return record


def _absent_in_entries(record: dict) -> list[str]:
    """`part.command.field` for each count an entry of an evaluation's per-command parts lacks
    (a command's name may hold dots, so these are not key paths for _present)."""
    absent = []
    for part in ENTRY_PARTS:
        entries = _part(record, part)
        for name, entry in entries.items() if isinstance(entries, dict) else ():
            absent += [f"{part}.{str(name)[:40]}.{field}" for field in ENTRY_FIELDS
                       if isinstance(entry, dict) and field not in entry]
    return absent


def _record(root: Path, rel: str) -> dict | None:
    """The record, or None where it is absent or not a JSON object (other checks name that)."""
    try:
        return load_json(root, rel) if (root / rel).is_file() else None
    except EvidenceStructureError:
        return None


def absent_field_problems(root: Path, runs: list[str], evidence_format: int) -> list[str]:
    """Each required field the records of the set's runs and evaluations lack."""
    problems = []
    why = f"absent, but this code writes it (a set made by this code, evidence format {evidence_format})"
    for name in runs:
        run = _record(root, f"runs/{name}/run.json") or {}
        command = run.get("command")
        reference = isinstance(command, list) and command[1:2] == ["train-reference"]
        for kind, rel in ((RUN, f"runs/{name}/run.json"), (META, f"runs/{name}/train_meta.json"),
                          (EVAL, f"eval/{name}.json")):
            record = _record(root, rel)
            if record is None:
                continue
            absent = [path for path in _required(kind, run, reference) if not _present(record, path)]
            absent += _absent_in_entries(record) if kind == EVAL else []
            problems += [f"{rel}: {path}: {why}" for path in absent]
    return problems
