"""Two configurations of a set that would train alike: the runs of a repeat share its seed
(paired repeats), so such a pair compares a configuration with itself, and the set's own
verify takes one run's events for a copy of the other's once everything has trained."""

from __future__ import annotations

from dataclasses import asdict

from sacscale.pipeline.plan_model import RunConfig
from sacscale.pipeline.plan_values import RUN_FIELDS, PlanError, config_key
from sacscale.pipeline.run_commands import override_arguments

# what a run's training does not depend on: the words the report shows for it, and the
# wall-clock limit the run wrapper holds it to (its name and folders are its own anyway)
NOT_TRAINING = ("description", "timeout_s")


def training(rc: RunConfig) -> dict:
    """The settings a run of `rc` trains with: the trainer's command and environment. The
    overrides as the words the command line gets, in any order: `replay-per-env: "64"` and
    `64` (or `replay_per_env`) give the trainer the same `--replay-per-env 64`."""
    settings = {k: v for k, v in asdict(rc).items() if k != "name" and k not in NOT_TRAINING}
    settings["overrides"] = sorted(words for words in override_arguments(rc) if words)
    return settings


def check_distinct_training(run_configs: dict[str, RunConfig], order: list[str], origins: dict[str, str],
                            given: dict) -> None:
    """PlanError naming the first two configurations of `order` that resolve to the same
    training. `origins`: where each entry comes from ("config" or a preset's name);
    `given`: the config's own run_configs, whose keys the message points at first."""
    for i, later in enumerate(order):
        twin = next((earlier for earlier in order[:i]
                     if training(run_configs[earlier]) == training(run_configs[later])), None)
        if twin is not None:
            raise PlanError(_twin_message(run_configs[twin], run_configs[later], origins, given))


def _twin_message(first: RunConfig, second: RunConfig, origins: dict[str, str], given: dict) -> str:
    def where(rc: RunConfig, field: str = "") -> str:
        return config_key(origins[rc.name], f"run_configs.{rc.name}" + (f".{field}" if field else ""))

    apart = [f for f in NOT_TRAINING if getattr(first, f) != getattr(second, f)]
    differ = f"they differ only in {' and '.join(apart)}" if apart else "they differ only in name"
    rc, field = _key_to_change(first, second, given)
    return (f"{where(second)}: trains exactly as {where(first)} does (trainer {first.trainer}, devices "
            f"{first.devices!r}, cpu_pools {first.cpu_pools} and every other training setting alike; {differ}), and "
            "both configurations of a repeat train on its one seed (paired repeats, on purpose: a second seed of "
            "one configuration is what repeats are for), so the set would compare a configuration with itself "
            f"and its verify would take one run for a copy of the other after all the training: give "
            f"{where(rc, field)} another value, or take {second.name} out of order")


def _key_to_change(first: RunConfig, second: RunConfig, given: dict) -> tuple[RunConfig, str]:
    """The training key to point at: one the config itself gives the later configuration
    (then the earlier), as the user wrote it; else its devices."""
    for rc in (second, first):
        entry = given.get(rc.name)
        fields = [f for f in RUN_FIELDS if f not in NOT_TRAINING and isinstance(entry, dict) and f in entry]
        if fields:
            return rc, fields[0]
    return second, "devices"
