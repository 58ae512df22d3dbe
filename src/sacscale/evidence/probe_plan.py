"""The correctness probe's settings against what the plan asked for. The pipeline's probe
rule passes plan.json's `probe` to `sacscale probe correctness` (workflow/rules/common.smk
`probe_args`): `--devices` (its ranks, world size and backend follow), `--iterations`,
`--compile-loss` and, where set, `--trainer-iterations` (the trainer path, which uses the
same devices). A record that probed other devices than the plan's tested something else."""

from __future__ import annotations

from sacscale.parallel.topology import shares_cuda_device
from sacscale.train.config import TrainConfig, TrainingError


def _asked(probe: dict) -> dict | str:
    """The settings the probe command derives from the plan's probe section, or why not."""
    try:
        devices = TrainConfig(devices=str(probe.get("devices"))).device_list()
    except TrainingError as exc:
        return f"plan.json's probe devices {str(probe.get('devices'))[:40]!r} are not a device list ({exc})"
    backend = "gloo" if devices[0] == "cpu" or shares_cuda_device(devices) else "nccl"
    return {"devices": devices, "world_size": len(devices), "backend": backend, "iterations": probe.get("iterations")}


def _differ(where: str, record: dict, asked: dict, given: str) -> list[str]:
    return [f"{where}{key} {record[key]!r}, but plan.json's probe ({given}) gives {value!r}"
            for key, value in asked.items() if key in record and value is not None and record[key] != value]


def probe_plan_problems(probe: dict, record: dict) -> list[str]:
    """correctness.json's settings against plan.json's `probe` (both objects)."""
    asked = _asked(probe)
    if isinstance(asked, str):
        return [asked]
    given = f"devices {str(probe.get('devices'))[:40]!r}"
    problems = _differ("", record, asked, given)
    if record.get("compile_loss") is True and not probe.get("compile_loss"):
        problems.append("compile_loss true, but plan.json's probe did not ask for compiled losses")
    planned = probe.get("trainer_iterations") or 0
    trainer = record.get("trainer_path")
    if planned and not isinstance(trainer, dict):
        problems.append(f"no trainer_path, but plan.json's probe asks for {planned} trainer iterations")
    elif trainer is not None and not planned:
        problems.append("a trainer_path, but plan.json's probe asks for no trainer iterations")
    elif isinstance(trainer, dict):
        problems += _differ("trainer_path.", trainer, {**asked, "iterations": planned, "backend": None},
                            f"{given}, trainer_iterations {planned}")
    return problems
