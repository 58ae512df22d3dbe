"""The actor settings a checkpoint carries (`actor_kwargs`), held to what `sacscale train`
can write: the trainer checks its learner settings (sacscale.checks) before it starts, so
settings outside those bounds were made or changed by hand. They are judged before any
network is built: an empty layer list ended in an IndexError, a zero width in torch's
warning, and a NaN or negative bound gave a policy evaluated as if it were the trained one.
A setting left out takes the actor's default, as it does when the network is built."""

from __future__ import annotations

import inspect

from sacscale.checks import learner_value_problem
from sacscale.learn.networks import Actor

_SHOWN_CHARS = 60
TASK_KEYS = ("tilt_obs",)  # the task settings the trainer writes into a checkpoint (`task`)

# every argument of Actor -> the learner setting (SACConfig's field) the trainer builds it from;
# each is judged by the trainer's own rule for that setting
TRAINER_NAMES = {"obs_dim": "actor_obs_dim", "action_dim": "action_dim", "hidden": "actor_hidden",
                 "log_std_min": "log_std_min", "log_std_max": "log_std_max", "mean_clip": "mean_clip",
                 "obs_norm": "obs_norm"}


def actor_arguments() -> dict[str, object]:
    """Actor's arguments and their defaults."""
    params = list(inspect.signature(Actor.__init__).parameters.values())[1:]  # past self
    return {p.name: p.default for p in params}


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS - 3]}..."


def actor_settings_problem(kwargs: dict) -> str | None:
    """Why the actor settings `kwargs` are not ones the trainer writes (naming the key), or None."""
    defaults = actor_arguments()
    unknown = [key for key in kwargs if key not in defaults]
    if unknown:
        return f"actor_kwargs holds {_shown(unknown[0])}, which is no setting of the actor"
    for key, name in TRAINER_NAMES.items():
        if key in kwargs and (what := learner_value_problem(name, kwargs[key])):
            return f"actor_kwargs.{key} is {_shown(kwargs[key])}, must be {what}"
    # SACConfig's own rule (its __post_init__), which the trainer meets before it starts
    low, high = (kwargs.get(key, defaults[key]) for key in ("log_std_min", "log_std_max"))
    if not low < high:
        return f"actor_kwargs.log_std_min is {low!r}, expected below log_std_max ({high!r})"
    return None


def task_settings_problem(task: dict) -> str | None:
    """Why the task settings `task` hold a key the trainer never writes (naming it), or None;
    their values are judged against the task's."""
    unknown = [key for key in task if key not in TASK_KEYS]
    return f"task holds {_shown(unknown[0])}, which is no setting the trainer writes" if unknown else None
