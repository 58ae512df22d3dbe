"""The actor settings a checkpoint carries (`actor_kwargs`), held to what `sacscale train`
can write: the trainer checks its learner settings (sacscale.checks) before it starts, so
settings outside those bounds were made or changed by hand. They are judged before any
network is built: an empty layer list ended in an IndexError, a zero width in torch's
warning, and a NaN or negative bound gave a policy evaluated as if it were the trained one.
A setting left out takes the actor's default, as it does when the network is built."""

from __future__ import annotations

import inspect
import math

from sacscale.checks import LOG_STD_BOUNDS, MAX_HIDDEN, MAX_LAYERS, MEAN_CLIP_BOUNDS
from sacscale.learn.networks import Actor

_SHOWN_CHARS = 60
TASK_KEYS = ("tilt_obs",)  # the task settings the trainer writes into a checkpoint (`task`)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v)


def _widths_ok(v) -> bool:
    return (isinstance(v, (list, tuple)) and 1 <= len(v) <= MAX_LAYERS
            and all(_is_int(h) and 1 <= h <= MAX_HIDDEN for h in v))


def _number_in(bounds: tuple[float, float]):
    return lambda v: _is_number(v) and bounds[0] <= v <= bounds[1]


# every argument of Actor -> (check, what the trainer writes there); obs_dim and action_dim are
# compared with the task's after these checks
SETTINGS = {
    "obs_dim": (_is_int, "a whole number"),
    "action_dim": (_is_int, "a whole number"),
    "hidden": (_widths_ok, f"a list of 1 to {MAX_LAYERS} layer widths, each a whole number in [1, {MAX_HIDDEN}]"),
    "log_std_min": (_number_in(LOG_STD_BOUNDS), f"a finite number in {list(LOG_STD_BOUNDS)}"),
    "log_std_max": (_number_in(LOG_STD_BOUNDS), f"a finite number in {list(LOG_STD_BOUNDS)}"),
    "mean_clip": (_number_in(MEAN_CLIP_BOUNDS), f"a finite number in {list(MEAN_CLIP_BOUNDS)}"),
    "obs_norm": (lambda v: isinstance(v, bool), "true or false"),
}


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
    for key, (ok, what) in SETTINGS.items():
        if key in kwargs and not ok(kwargs[key]):
            return f"actor_kwargs.{key} is {_shown(kwargs[key])}, expected {what}"
    low, high = (kwargs.get(key, defaults[key]) for key in ("log_std_min", "log_std_max"))
    if not low < high:
        return f"actor_kwargs.log_std_min is {low!r}, expected below log_std_max ({high!r})"
    return None


def task_settings_problem(task: dict) -> str | None:
    """Why the task settings `task` hold a key the trainer never writes (naming it), or None;
    their values are judged against the task's."""
    unknown = [key for key in task if key not in TASK_KEYS]
    return f"task holds {_shown(unknown[0])}, which is no setting the trainer writes" if unknown else None
