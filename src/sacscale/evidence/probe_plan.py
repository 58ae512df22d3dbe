"""The correctness probe's settings against what the plan asked for. The pipeline's probe
rule passes plan.json's `probe` to `sacscale probe correctness` (workflow/rules/common.smk
`probe_args`): `--devices`, `--iterations`, `--compile-loss` where true and, where set,
`--trainer-iterations` (the trainer path, which uses the same devices); nothing else, so
every other setting is the command's default (sacscale.parallel.probe_settings
`ProbeSettings`: gradient sync on, no mutation, float32). The settings the record must
state are derived as the probe derives them (`recorded_settings`): world size and backend
from the devices; batch and replay sizes from CUDA or CPU; compiled losses and the
all-reduce inside the CUDA graph only on CUDA with one device per rank (ranks sharing a GPU
sync between graph segments, where the probe runs its losses eagerly even when the plan
asks for compiled ones). A record that probed other settings tested something else. The
rule runs the probe under `timeout` with the plan's `timeout_s`, so the record's `seconds`
are fewer."""

from __future__ import annotations

from sacscale.evidence.result import same_value
from sacscale.parallel.probe_settings import ProbeSettings, recorded_settings
from sacscale.train.config import TrainConfig, TrainingError

# what the plan decides; the rest are the command's defaults (the pipeline passes no option
# for them). The tolerances follow the dtype (sacscale.evidence.probe_code_settings), the
# reference batch the ranks' batches.
FROM_PLAN = ("devices", "world_size", "backend", "iterations", "batch_per_rank", "replay_rows", "compile_loss",
             "allreduce_in_cuda_graph")
FROM_COMMAND = ("mode", "grad_sync", "mutation", "autocast_dtype")
COMMAND = "the probe command the pipeline runs"


def _asked(probe: dict) -> dict | str:
    """The settings the probe command records for the plan's probe section, or why none."""
    try:
        devices = TrainConfig(devices=str(probe.get("devices"))).device_list()
    except TrainingError as exc:
        return f"plan.json's probe devices {str(probe.get('devices'))[:40]!r} are not a device list ({exc})"
    settings = ProbeSettings(devices, probe.get("iterations"), compile_loss=bool(probe.get("compile_loss")))
    return {key: value for key, value in recorded_settings(settings.resolved()).items()
            if key in FROM_PLAN + FROM_COMMAND and (value is not None or key == "mutation")}


def _differ(where: str, record: dict, asked: dict, sources: dict) -> list[str]:
    """`where`key value, but <source> gives value: each setting the record states otherwise."""
    return [f"{where}{key} {record[key]!r}, but {sources.get(key, COMMAND)} gives {value!r}"
            for key, value in asked.items() if key in record and not same_value(record[key], value)]


def _sources(probe: dict, trainer_iterations: int | None = None) -> dict[str, str]:
    """What each setting the plan decides is derived from, as a message names it."""
    devices = f"plan.json's probe (devices {str(probe.get('devices'))[:40]!r}"
    if trainer_iterations is not None:
        devices += f", trainer_iterations {trainer_iterations}"
    sources = {key: devices + ")" for key in FROM_PLAN}
    sources["compile_loss"] = (f"{devices}, compile_loss {bool(probe.get('compile_loss'))}; compiled only on CUDA "
                               "with one device per rank)")
    return sources


def _duration_problems(probe: dict, record: dict) -> list[str]:
    """The probe ran inside its job, which `timeout` ends after the plan's timeout_s
    (workflow/rules/probe.smk): a record took less."""
    limit, seconds = probe.get("timeout_s"), record.get("seconds")
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (limit, seconds))
    if numbers and seconds > limit:
        return [f"seconds {seconds!r}, but plan.json's probe timeout_s {limit!r} ends the probe's job before"]
    return []


def probe_plan_problems(probe: dict, record: dict) -> list[str]:
    """correctness.json's settings against plan.json's `probe` (both objects)."""
    asked = _asked(probe)
    if isinstance(asked, str):
        return [asked]
    problems = _differ("", record, asked, _sources(probe))
    problems += _duration_problems(probe, record)
    planned = probe.get("trainer_iterations") or 0
    trainer = record.get("trainer_path")
    if planned and trainer is None:
        problems.append(f"no trainer_path, but plan.json's probe asks for {planned} trainer iterations")
    elif trainer is not None and not planned:
        problems.append("a trainer_path, but plan.json's probe asks for no trainer iterations")
    elif isinstance(trainer, dict):  # the same devices and mutation, its own iterations
        mine = {key: asked[key] for key in ("devices", "world_size", "mutation")}
        problems += _differ("trainer_path.", trainer, {**mine, "iterations": planned}, _sources(probe, planned))
    return problems
