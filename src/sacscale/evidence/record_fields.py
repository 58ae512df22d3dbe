"""Fields a record states that what lies beside it already gives: model.json's size and
MuJoCo version (the hashed model file, environment.json's versions); train_meta.json's
summaries (`ranks_identical` from the ranks' state hashes, `nonfinite_rows` from the
counts by rank, `losses_compiled` from the run's command, as sacscale.train.record writes
them); run.json's `env_set` (what the run wrapper exported: the plan's `env` and
`cuda_visible_devices`, as sacscale.pipeline.run_commands.run_environment gives them).
Each is compared only where both sides are recorded (older sets lack some)."""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.model_record import MODEL_FILE
from sacscale.evidence.result import same_value
from sacscale.train.config import TrainConfig, compiles_losses

# what the pipeline adds for a run of the reference trainer (pipeline/run_commands.py rule_environment)
REFERENCE_ENV = ("SACSCALE_REFERENCE_PYTHON", "SACSCALE_REFERENCE_MESHES")


def model_problems(root: Path, model: dict, env: dict) -> list[str]:
    path = root / "model" / MODEL_FILE
    problems = []
    size = path.lstat().st_size if path.is_file() else None
    if "bytes" in model and size is not None and not same_value(model["bytes"], size):
        problems.append(f"model: model.json bytes {str(model['bytes'])[:20]}, model/{path.name} is {size:,} bytes")
    versions = env.get("versions") if isinstance(env.get("versions"), dict) else {}
    recorded = versions.get("mujoco")
    summary = model.get("summary") if isinstance(model.get("summary"), dict) else {}
    for where, version in (("mujoco_version", model.get("mujoco_version")),
                           ("summary.mujoco_version", summary.get("mujoco_version"))):
        if recorded is not None and version is not None and version != recorded:
            problems.append(f"model: model.json {where} {str(version)[:20]!r}, environment.json versions.mujoco "
                            f"{str(recorded)[:20]!r}")
    return problems


def _losses_compiled(args) -> bool | None:
    """What the trainer records as `losses_compiled` for its parsed command (None: not ours)."""
    try:
        return compiles_losses(TrainConfig(**vars(args)))
    except TypeError:  # the reference trainer's command: other options
        return None


def meta_problems(name: str, meta: dict, args, reference: bool) -> list[str]:
    """train_meta.json's summaries against the fields and the command beside them."""
    problems = []
    digests = meta.get("final_learner_state_sha256_by_rank")
    if isinstance(digests, list) and digests and "ranks_identical" in meta \
            and meta["ranks_identical"] is not all(d == digests[0] for d in digests):
        problems.append(f"{name}: train_meta.json ranks_identical {meta['ranks_identical']!r}, but "
                        f"final_learner_state_sha256_by_rank gives {not meta['ranks_identical']}")
    by_rank = meta.get("nonfinite_rows_by_rank")
    if isinstance(by_rank, list) and all(isinstance(n, int) for n in by_rank) and "nonfinite_rows" in meta \
            and not same_value(meta["nonfinite_rows"], sum(by_rank)):
        problems.append(f"{name}: train_meta.json nonfinite_rows {str(meta['nonfinite_rows'])[:20]}, but "
                        f"nonfinite_rows_by_rank sums to {sum(by_rank)}")
    compiled = None if reference or "losses_compiled" not in meta else _losses_compiled(args)
    if compiled is not None and meta["losses_compiled"] is not compiled:
        problems.append(f"{name}: train_meta.json losses_compiled {meta['losses_compiled']!r}, but the run's "
                        f"command gives {compiled} (compiled losses need --compile and --allreduce in-graph)")
    return problems


def env_set_problems(name: str, run: dict, config: dict, reference: bool) -> list[str]:
    """run.json's env_set against the plan's run configuration."""
    if not isinstance(run.get("env_set"), dict) or not isinstance(config.get("env", {}), dict):
        return []
    planned = {str(k): str(v) for k, v in (config.get("env") or {}).items()}
    if config.get("cuda_visible_devices") is not None:
        planned["CUDA_VISIBLE_DEVICES"] = str(config["cuda_visible_devices"])
    given = {k: v for k, v in run["env_set"].items() if not (reference and k in REFERENCE_ENV)}
    if given == planned:
        return []
    return [f"{name}: run.json env_set {_shown(given)}, but plan.json's run configuration gives {_shown(planned)}"]


def _shown(env: dict) -> str:
    text = ", ".join(f"{k}={v}" for k, v in sorted(env.items()))
    return "{" + (text if len(text) <= 160 else text[:157] + "...") + "}"
