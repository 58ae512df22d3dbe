"""Whether each run's learner ever updates. A rank adds its num_envs rows to its own
replay each iteration and updates from the first iteration whose end finds the replay
holding the learning start's rows (sacscale.train.rank, SACConfig.learning_starts_rows:
`extra`'s learning_starts, else max(batch size, 10 x num_envs)); the ranks' rows are not
pooled, so their number does not count. A run shorter than that trained, verified and was
reported with collection alone measured, its learner never having run."""

from __future__ import annotations

import argparse

from sacscale.learn.learning_start import learning_starts_rows
from sacscale.pipeline.plan_values import PlanError
from sacscale.train.config import TrainConfig
from sacscale.train.options import json_setting


def check_learner_updates(run_configs: dict, keys: dict, iterations: int, iterations_key: str) -> None:
    """PlanError naming the key to change where a run of our trainer would end before its
    learner's first update; `keys`: each configuration's `where(field)`, the key that sets a
    field of it (plan_values.run_field_key: its own entry's, or run_defaults')."""
    for name, rc in run_configs.items():
        if rc.trainer != "sacscale":
            continue  # the reference starts its learner by its own settings
        spelled, starts = _extra_learning_starts(rc.overrides)
        batch = rc.batch_size if rc.batch_size is not None else TrainConfig.batch_size
        rows, collected = learning_starts_rows(starts, batch, rc.num_envs), iterations * rc.num_envs
        if rows <= collected:
            continue
        if starts is not None:
            key = keys[name](f"overrides.{spelled}")
            raise PlanError(f"{key}: learning_starts {starts} is more rows than a rank's replay collects in a run "
                            f"(iterations {iterations} x num_envs {rc.num_envs} = {collected}): the learner would "
                            f"never update; give at most {collected}, or more iterations")
        first = -(-rows // rc.num_envs)
        raise PlanError(f"{iterations_key}: {iterations}: run_configs.{name}'s learner first updates at iteration "
                        f"{first} (once a rank's replay holds max(batch_size {batch}, 10 x num_envs {rc.num_envs}) = "
                        f"{rows} rows, {rc.num_envs} an iteration): its runs would end before it ever updates; give "
                        f"at least {first} iterations")


def _extra_learning_starts(overrides: dict) -> tuple[str | None, int | None]:
    """(the override key of `--extra`, its learning_starts) where it gives one, else (None, None).
    The values were checked already (check_trainer_values): a whole number or null."""
    for key, value in overrides.items():
        if str(key).replace("-", "_") != "extra":
            continue
        try:
            settings = json_setting(str(value))
        except argparse.ArgumentTypeError:
            return None, None
        starts = settings.get("learning_starts") if isinstance(settings, dict) else None
        return (str(key), starts) if isinstance(starts, int) and not isinstance(starts, bool) else (None, None)
    return None, None
