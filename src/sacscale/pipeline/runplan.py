"""The pipeline's run plan: a preset plus the user's config, resolved and checked.

`resolve(config, presets)` turns the validated `config.yaml` (see
`workflow/schemas/config.schema.yaml`) and the named presets (`workflow/presets.yaml`)
into a `Plan`: which preset (and why), the run set's name, every run configuration with
its defaults filled in, and the runs in execution order
(`{prefix}_r{k}_{config}`, k = 1..repeats; within each repeat the configurations run in
`order` or reversed, counterbalanced ABBA BAAB..., see `repeat_order`; both configurations
of repeat k use seed `seed + k - 1`, so no two configurations of `order` may resolve to the
same training: see twin_configs).
Every problem raises `PlanError` naming the key, before any rule runs.

Merging: a key given in the config (not null) replaces the preset's; `run_configs`
entries are merged by name (the config's fields replace the preset's fields of that
entry; new names are added); `run_defaults` and `probe` are merged field by field; a run
configuration's `overrides` and `env` key by key over every layer below (run_merge).
"""

from __future__ import annotations

# The pipeline's one entry point (the Snakefile, workflow/rules/common.smk and the verifier
# import these names from here); each job lives in its own module:
#   plan_values    PlanError, the name patterns and bounds, value checks
#   plan_model     Host, RunConfig, Run, Plan, repeat_order
#   overrides      a run configuration's overrides against the trainer they go to
#   run_config     one run configuration merged and checked
#   preset_choice  which preset, and why
#   planning       resolve: the whole plan
#   run_commands   a run's command line, environment and record
#   config_errors  the config's problems as one line each
from sacscale.pipeline.config_errors import (
    check_config,
    check_profiles,
    check_state_folder,
    config_error_line,
    config_error_message,
)
from sacscale.pipeline.overrides import (
    HYDRA_KEY,
    PIPELINE_OWNED,
    REFERENCE_OWNED,
    check_override,
    check_reference_override,
    check_trainer_values,
)
from sacscale.pipeline.plan_model import (
    SCHEDULES,
    Host,
    Plan,
    Run,
    RunConfig,
    repeat_order,
    visible_cuda_devices,
)
from sacscale.pipeline.plan_values import (
    CPU_LIST,
    DEVICES,
    ENV_NAME,
    NAME,
    RUN_FIELDS,
    TRAINERS,
    PlanError,
)
from sacscale.pipeline.plan_notes import plan_notes
from sacscale.pipeline.planning import left_out_of_order, resolve
from sacscale.pipeline.run_commands import (
    describe_run,
    env_arguments,
    reference_command,
    resolved_run,
    rule_environment,
    run_environment,
    train_command,
    work_folder,
)

__all__ = [
    "CPU_LIST", "DEVICES", "ENV_NAME", "HYDRA_KEY", "NAME", "PIPELINE_OWNED", "REFERENCE_OWNED", "RUN_FIELDS",
    "SCHEDULES", "TRAINERS", "Host", "Plan", "PlanError", "Run", "RunConfig", "check_config", "check_override",
    "check_profiles", "check_reference_override", "check_state_folder", "check_trainer_values", "config_error_line",
    "config_error_message", "describe_run", "env_arguments", "left_out_of_order", "plan_notes", "reference_command",
    "repeat_order",
    "resolve", "resolved_run", "rule_environment", "run_environment", "train_command", "visible_cuda_devices",
    "work_folder",
]
