"""A rank state (rank{r}.pt) held to what the trainer saves there at the checkpoint's iteration:
its learner part (sacscale.learn.learning_state.save, for the resumed run's learner settings),
its env-step count and its curriculum. Judged before the run starts, so that a crafted or
damaged state is refused as bad input, not found by a rank once the run has begun (exit 1,
the finished run's record rewritten as failed) or trained on."""

from __future__ import annotations

import sys

import torch

from sacscale.learn.replay import transition_layout
from sacscale.learn.state_names import OBS_NORM_FIELDS, OBS_NORM_STATE_TENSORS, STATE_TENSORS
from sacscale.saved_tensors import tensor_problem
from sacscale.task.walk_rules import TaskConfig
from sacscale.train.checkpoint import RANK_LEARNER_KEYS

# The random stream's state: bytes, as the learner's generator gives them. A CPU run's is a
# torch.Generator's mt19937 state, judged by loading it into a scratch one. A CUDA run's is
# the device generator's Philox seed and offset (8 bytes each, native order), judged as torch's
# CUDA set_state judges it, without initialising CUDA in the launcher: the size, and an offset
# that is a multiple of 4.
RNG_DTYPE = torch.uint8
CUDA_RNG_BYTES = 16
PHILOX_OFFSET_STEP = 4
# The collector's curriculum (sacscale.task.walk_rules.PenaltyCurriculum, of the default task):
# the scale clipped to its range, the mean a moving average of episode lengths (up to float
# rounding, hence the slack).
TASK = TaskConfig()
LENGTH_ROUNDING = 1e-9
# The replay rows and the normaliser's pending rows are float32 and may hold NaN or inf: the
# trainer keeps a non-finite transition in place (marked, never sampled, and judged again on
# load) and the normaliser leaves such rows out when it merges them. Their pending count is
# float64, 0 or 1.
ROWS_DTYPE = torch.float32
PENDING_DTYPE = torch.float64
REPLAY_COUNTS = ("pos", "size", "capacity", "row_dim")
# The learner sets each normaliser from its statistics after every merge (shift = mean, scale =
# 1 / (std + eps), in float32 on its device); before its first merge they are 0 and 1. The slack
# is for the rounding of another device's sqrt and division.
SCALE_RTOL = 1e-4
# AdamW counts its steps in float32, whose whole numbers stop at 2**24 (adding 1 rounds back)
FLOAT32_LAST_STEP = 2 ** 24


def rank_counts_problem(mine: dict, iteration: int, num_envs: int) -> str | None:
    """Why the rank state `mine` (its shape already judged) holds an env-step count or a
    curriculum the trainer does not write at `iteration` with `num_envs` environments, or None."""
    steps = iteration * num_envs  # every iteration steps each of the rank's environments once
    if mine["env_steps"] != steps:
        return f"its env_steps {mine['env_steps']} is not the {steps} of {iteration} iterations of {num_envs} envs"
    if not mine.get("curriculum"):
        return None
    scale, length = mine["curriculum"]
    low, high = TASK.penalty_scale_range
    if not low <= scale <= high:
        return f"its curriculum's penalty scale {scale!r} is outside the trainer's range {low}..{high}"
    if not 0 <= length <= TASK.episode_length * (1 + LENGTH_ROUNDING):
        return f"its curriculum's mean episode length {length!r} is outside 0..{TASK.episode_length}"
    return None


def learner_problem(learner: dict, sac, num_envs: int, iteration: int, on_cuda: bool) -> str | None:
    """Why `learner` is not the rank part the trainer writes at `iteration` for a learner of
    settings `sac` (SACConfig) with `num_envs` environments, on CUDA or not, or None."""
    unknown = sorted(str(k)[:40] for k in set(learner) - set(RANK_LEARNER_KEYS))
    if unknown:
        return f"learner.{unknown[0]}: not part of a rank's learning state (it has {', '.join(RANK_LEARNER_KEYS)})"
    for key in ("rng", "iterations"):
        if key not in learner:
            return f"its 'learner.{key}' is missing"
    iterations = learner["iterations"]
    if type(iterations) is not int or not 0 <= iterations <= iteration:
        return (f"learner.iterations {iterations!r} is not a count of updates (one at most in each of the "
                f"{iteration} iterations)")
    return (_rng_problem(learner["rng"], on_cuda)
            or _replay_problem(learner.get("replay"), sac, num_envs, iteration)
            or _fresh_problem(learner, sac, num_envs))


def _rng_problem(rng, on_cuda: bool) -> str | None:
    """Why `rng` is not a random state the learner's generator (CUDA or CPU) would take."""
    problem = tensor_problem(rng, "learner.rng", RNG_DTYPE, (None,))
    if problem is None and not rng.is_contiguous():  # torch copies the state's bytes from its first one
        problem = "learner.rng is not one contiguous run of bytes"
    return problem or (_cuda_rng_problem(rng) if on_cuda else _cpu_rng_problem(rng))


def _cpu_rng_problem(rng: torch.Tensor) -> str | None:
    scratch = torch.Generator()
    size = scratch.get_state().numel()
    if rng.numel() != size:
        return f"learner.rng holds {rng.numel()} bytes, a CPU generator's state {size}"
    try:
        scratch.set_state(rng)
    except RuntimeError as exc:  # torch's own judgement of the mt19937 state
        return f"learner.rng is not a CPU generator's state: {str(exc).splitlines()[0][:200]}"
    return None


def _cuda_rng_problem(rng: torch.Tensor) -> str | None:
    if rng.numel() != CUDA_RNG_BYTES:
        return f"learner.rng holds {rng.numel()} bytes, a CUDA generator's state {CUDA_RNG_BYTES} (seed, offset)"
    offset = int.from_bytes(bytes(rng[CUDA_RNG_BYTES // 2:].tolist()), sys.byteorder, signed=True)
    if offset % PHILOX_OFFSET_STEP:
        return f"learner.rng's Philox offset {offset} is not a multiple of {PHILOX_OFFSET_STEP}, as torch needs"
    return None


def _replay_problem(replay, sac, num_envs: int, iteration: int) -> str | None:
    """Why a saved replay buffer (None where --checkpoint-replay was off) is not the learner's
    after `iteration` iterations of `num_envs` environments."""
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
    problem = _ring_problem(counts["size"], counts["pos"], counts["capacity"], iteration * num_envs)
    return problem or tensor_problem(replay["rows"], "learner.replay.rows", ROWS_DTYPE, (counts["size"], want[1]),
                                     finite=False)


def _ring_problem(size: int, pos: int, capacity: int, written: int) -> str | None:
    """Why a ring of `capacity` rows does not hold `size` rows with its next write at `pos` after at
    most `written` rows were added. The buffer fills from row 0 (pos == size) until it is full;
    then pos wraps and may be any row. A resume without the replay starts it empty, so fewer rows
    than `written` is no fault."""
    if size > written:
        return f"learner.replay's size {size} is more than the {written} rows the run has collected"
    if size < capacity and pos != size:
        return (f"learner.replay's pos {pos} is not its size {size}: a buffer not yet full ({capacity} rows) "
                "writes next where its rows end")
    return None


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
    problem = (next((p for name, dim in dims.items() if (p := tensor_problem(
                fresh[name], f"learner.fresh.{name}", ROWS_DTYPE, (num_envs, dim), finite=False))), None)
               or tensor_problem(learner["fresh_pending"], "learner.fresh_pending", PENDING_DTYPE, ()))
    pending = None if problem else learner["fresh_pending"].item()
    if pending not in (None, 0.0, 1.0):  # a flag: the rows are still to be merged (1) or were merged (0)
        return f"learner.fresh_pending {pending!r} is not 0 or 1 (whether its {num_envs} rows are still to be merged)"
    return problem


def optimizer_steps_problem(optimizers: dict, iterations: int, sac) -> str | None:
    """Why final.pt's AdamW step counts (their shape and values already judged) are not what a
    learner of settings `sac` makes in `iterations` updates: each steps the critic's and alpha's
    optimizers `critic_updates` times and the actor's `actor_updates` times (a CUDA graph's
    warm-up steps are undone), and a learner that never updated has no AdamW state."""
    for name, per_update in (("critic", sac.critic_updates), ("alpha", sac.critic_updates),
                             ("actor", sac.actor_updates)):
        moments = optimizers[name].get(0)
        steps = int(moments["step"].item()) if moments else 0
        if steps != min(iterations * per_update, FLOAT32_LAST_STEP):
            return (f"final.pt's optimizers.{name} has made {steps} step(s), its learner.iterations {iterations} "
                    f"make {iterations * per_update} ({per_update} an update)")
    return None


def state_names_problem(learner_state: dict) -> str | None:
    """Why the names of final.pt's learner_state are not those of a learner's state tensors
    (sacscale.learn.state_names), with or without its observation normaliser, or None."""
    names = {str(name)[:40] for name in learner_state}
    unknown = sorted(names - {*STATE_TENSORS, *OBS_NORM_STATE_TENSORS})
    if unknown:
        return f"learner_state.{unknown[0]}: not a state tensor of the learner"
    wanted = STATE_TENSORS + (OBS_NORM_STATE_TENSORS if names & set(OBS_NORM_STATE_TENSORS) else ())
    missing = [name for name in wanted if name not in names]
    return f"its 'learner_state.{missing[0]}' is missing" if missing else None


def normaliser_problem(learner_state: dict, rows: int, sac) -> str | None:
    """Why final.pt's observation-normaliser state (its names, dtypes, dimensions and
    finiteness already judged) is not one a learner of settings `sac` makes from at most
    `rows` rows, or None."""
    saved = any(name in learner_state for name in OBS_NORM_STATE_TENSORS)
    if saved != bool(sac.obs_norm):
        return (f"learner_state.{OBS_NORM_STATE_TENSORS[0]}: saved by a run with --obs-norm, its train_config has "
                "none" if saved else f"its 'learner_state.{OBS_NORM_STATE_TENSORS[0]}' is missing (a run with "
                "--obs-norm saves it)")
    if not saved:
        return None
    return (_widths_problem(learner_state, sac) or _statistics_problem(learner_state, rows, sac.obs_norm_eps)
            or next((p for field in OBS_NORM_FIELDS if (p := _set_from_statistics_problem(
                {part: learner_state[f"{field}_{part}"] for part in ("count", "mean", "var", "shift", "scale")},
                field, sac.obs_norm_eps))), None))


def _widths_problem(learner_state: dict, sac) -> str | None:
    """A normaliser vector (one value per observation column) of another width than the
    resumed learner's observations: it ended in torch's size error, naming no file."""
    dims = {"actor_obs": sac.actor_obs_dim, "critic_obs": sac.critic_obs_dim}
    for name in OBS_NORM_STATE_TENSORS:
        field = next(f for f in OBS_NORM_FIELDS if name.startswith(f))
        if not name.endswith("_count") and learner_state[name].numel() != dims[field]:
            return (f"learner_state.{name} has shape {tuple(learner_state[name].shape)}, expected ({dims[field]},) "
                    f"(the resumed run's {field} columns)")
    return None


def _statistics_problem(learner_state: dict, rows: int, eps: float) -> str | None:
    """A row count in 0..rows, variances >= 0 (each merge adds non-negative terms), and the
    scale 1 / (std + eps) in (0, 1 / eps] (or its starting 1). A huge scale reached the
    collector as non-finite actions once the run had started."""
    highest_scale = max(1.0, 1.0 / eps) * (1 + 1e-6)  # float32 rounding of 1 / (0 + eps)
    for name, value in learner_state.items():
        name = str(name)
        if name.endswith("_count") and not 0 <= float(value) <= rows * (1 + 1e-9):
            return f"learner_state.{name} {float(value)!r} is not a count of the {rows} rows the run has collected"
        if name.endswith("_var") and bool((value < 0).any()):
            return f"learner_state.{name} holds a negative variance"
        if name.endswith("_scale") and not bool(((value > 0) & (value <= highest_scale)).all()):
            return f"learner_state.{name} holds a value outside 0..{highest_scale:.6g}, 1 / (std + obs_norm_eps)"
    return None


def _set_from_statistics_problem(norm: dict, field: str, eps: float) -> str | None:
    """Why the normaliser `norm` of `field` (its count, mean, var, shift and scale) is not the
    one the learner sets from those statistics: shift = mean, scale = 1 / (std + eps), or the
    starting shift 0 and scale 1 while no row was merged (mean 0, var 1). Statistics edited
    apart from their normaliser were resumed and trained on silently."""
    if not torch.equal(norm["shift"], norm["mean"]):  # a copy of the mean, bit for bit
        return f"learner_state.{field}_shift is not its {field}_mean, which the learner sets it to"
    if float(norm["count"]) == 0 and not (bool((norm["mean"] == 0).all()) and bool((norm["var"] == 1).all())):
        return f"learner_state.{field}_count is 0, but its {field}_mean and _var are not the starting 0 and 1"
    derived = 1.0 / (norm["var"].clamp(min=0.0).sqrt() + eps)
    if float(norm["count"]) == 0 and bool((norm["scale"] == 1).all()):
        return None  # no merge yet
    off = ~torch.isclose(norm["scale"], derived, rtol=SCALE_RTOL, atol=0.0)
    if bool(off.any()):
        i = int(off.nonzero()[0])
        return (f"learner_state.{field}_scale[{i}] {norm['scale'][i].item():.6g} is not the "
                f"{derived[i].item():.6g} its {field}_var {norm['var'][i].item():.6g} gives (1 / (std + obs_norm_eps))")
    return None
