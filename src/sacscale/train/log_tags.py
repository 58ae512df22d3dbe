"""The names a rank logs under: the collector's and learner's phase times, the statistics
summed over a logging interval, and the learner's metrics with their TensorBoard tags. Apart
from the logging (sacscale.train.logs, which needs torch) so that verify reads them without
loading torch."""

from __future__ import annotations

from sacscale.task.terms import REWARD_TERMS

# Collector times per iteration (ms), logged as Time/collector_<name> by a traced run.
# The first four are the collector's main thread and add up to its iteration; physics
# is the pool's busy time, and physics_wait the part of it the main thread waited for
# (inside env_step): with the halves pipeline the rest of the physics is hidden.
COLLECTOR_PHASES = ("env_step_ms", "action_select_ms", "replay_write_ms", "weight_sync_ms",
                    "physics_ms", "physics_wait_ms")
# Per-slot reward statistics, summed over a logging interval and logged as its means.
REWARD_STATS = (*(f"reward_{t}" for t in REWARD_TERMS), *(f"reward_raw_{t}" for t in REWARD_TERMS))
# Collector statistics summed over an interval (episodes, faults, rewards, phase times).
SUMMED_STATS = ("episode_return_sum", "episode_length_sum", "episode_count", "falls", "sim_errors",
                *REWARD_STATS, *COLLECTOR_PHASES)
LEARNER_PHASES = ("learner_wait_ms", "learner_h2d_ms", "learner_update_ms")
LEARNER_METRIC_TAGS = (("critic_loss", "Loss/critic"), ("actor_loss", "Loss/actor"),
                       ("alpha_loss", "Loss/alpha"), ("alpha", "Train/alpha"),
                       ("entropy", "Train/entropy"), ("q_mean", "Train/q_mean"))
