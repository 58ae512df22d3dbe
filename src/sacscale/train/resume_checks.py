"""A rank state's learner part (rank{r}.pt's `learner`), held to what the trainer saves there
(sacscale.learn.learning_state.save) for the resumed run's learner settings: judged before the
run starts, so that a crafted or damaged part is refused as bad input, not found by a rank
once the run has begun (exit 1, the finished run's record rewritten as failed)."""

from __future__ import annotations

import torch

from sacscale.learn.replay import transition_layout
from sacscale.saved_tensors import tensor_problem
from sacscale.train.checkpoint import RANK_LEARNER_KEYS

# The random stream's state: bytes. Its length is the generator's (CPU or CUDA, which this
# check does not build); the rank's set_state judges it.
RNG_DTYPE = torch.uint8
# The replay rows and the normaliser's pending rows are float32 and may hold NaN or inf: the
# trainer keeps a non-finite transition in place (marked, never sampled, and judged again on
# load) and the normaliser leaves such rows out when it merges them. Their pending count is
# float64, 0 or 1.
ROWS_DTYPE = torch.float32
PENDING_DTYPE = torch.float64
REPLAY_COUNTS = ("pos", "size", "capacity", "row_dim")


def learner_problem(learner: dict, sac, num_envs: int) -> str | None:
    """Why `learner` is not the rank part the trainer writes for a learner of settings `sac`
    (SACConfig) with `num_envs` environments, or None."""
    unknown = sorted(str(k)[:40] for k in set(learner) - set(RANK_LEARNER_KEYS))
    if unknown:
        return f"learner.{unknown[0]}: not part of a rank's learning state (it has {', '.join(RANK_LEARNER_KEYS)})"
    for key in ("rng", "iterations"):
        if key not in learner:
            return f"its 'learner.{key}' is missing"
    iterations = learner["iterations"]
    if type(iterations) is not int or iterations < 0:
        return f"learner.iterations {iterations!r} is not a count of updates"
    return (tensor_problem(learner["rng"], "learner.rng", RNG_DTYPE, (None,))
            or _replay_problem(learner.get("replay"), sac, num_envs)
            or _fresh_problem(learner, sac, num_envs))


def _replay_problem(replay, sac, num_envs: int) -> str | None:
    """Why a saved replay buffer (None where --checkpoint-replay was off) is not the learner's."""
    if replay is None:
        return None
    if not isinstance(replay, dict) or set(replay) != {"rows", *REPLAY_COUNTS}:
        return f"learner.replay is not a replay buffer's state (rows, {', '.join(REPLAY_COUNTS)})"
    counts = {k: replay[k] for k in REPLAY_COUNTS}
    if any(type(v) is not int for v in counts.values()):
        return f"learner.replay's {', '.join(REPLAY_COUNTS)} are not all whole numbers"
    want = (sac.replay_capacity(num_envs),
            transition_layout(sac.actor_obs_dim, sac.critic_obs_dim, sac.action_dim)["terminated"].stop)
    if (counts["capacity"], counts["row_dim"]) != want:
        return (f"learner.replay holds {counts['capacity']} x {counts['row_dim']} rows and columns, the resumed "
                f"learner's {want[0]} x {want[1]}")
    if not (0 <= counts["size"] <= counts["capacity"] and 0 <= counts["pos"] < counts["capacity"]):
        return f"learner.replay's size {counts['size']} or pos {counts['pos']} is outside its {want[0]} rows"
    return tensor_problem(replay["rows"], "learner.replay.rows", ROWS_DTYPE, (counts["size"], want[1]), finite=False)


def _fresh_problem(learner: dict, sac, num_envs: int) -> str | None:
    """Why the normaliser's pending rows (saved with --obs-norm only) are not the learner's."""
    saved = [k for k in ("fresh", "fresh_pending") if k in learner]
    if not sac.obs_norm:
        return f"learner.{saved[0]}: saved by a run with --obs-norm, this one has none" if saved else None
    if len(saved) < 2:
        return "its 'learner.fresh' and 'learner.fresh_pending' are missing (a run with --obs-norm saves them)"
    fresh, dims = learner["fresh"], {"actor_obs": sac.actor_obs_dim, "critic_obs": sac.critic_obs_dim}
    if not isinstance(fresh, dict) or set(fresh) != set(dims):
        return f"learner.fresh is not the normaliser's pending rows ({', '.join(dims)})"
    return (next((p for name, dim in dims.items() if (p := tensor_problem(
                fresh[name], f"learner.fresh.{name}", ROWS_DTYPE, (num_envs, dim), finite=False))), None)
            or tensor_problem(learner["fresh_pending"], "learner.fresh_pending", PENDING_DTYPE, ()))
