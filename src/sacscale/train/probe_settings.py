"""The trainer-path probe's settings, without torch: the probe (sacscale.train.probe) runs
with them, `sacscale probe` fills them from its options, and verify
(sacscale.evidence.probe_code_settings) derives from them what a record's `trainer_path`
must say: the command offers no option for the number of environments or the batch, so
every record states the defaults here."""

from __future__ import annotations

from dataclasses import dataclass, field

from sacscale.parallel.probe_settings import SYNC_REL_TOL

# every field of the trainer path's record (correctness.json's `trainer_path`, written by
# sacscale.train.probe); its comparisons hold sacscale.parallel.probe_settings.COMPARISON_FIELDS
TRAINER_RECORD_FIELDS = (
    "pass", "mode", "world_size", "devices", "iterations", "num_envs", "batch_per_rank", "mutation",
    "learner_overrides", "checks", "learner_updates_per_rank", "rank_spread_before_broadcast_max_abs",
    "rank_spread_max_abs", "trainer_found_ranks_apart", "comparisons", "sync_tolerance", "criterion",
)

CRITERION = ("the trainer's own run_rank (real collectors): it must broadcast and install the hooks, "
             "the learner must update, ranks built from different seeds must end bit-identical, "
             f"and every synced gradient must be the ranks' mean within {SYNC_REL_TOL:g}")


@dataclass
class TrainerProbeSettings:
    """`sacscale.train.rank.run_rank` itself, with real collectors, for a few iterations: the
    trainer builds each rank's learner from its own seed, broadcasts, installs the hooks."""
    devices: list[str]
    iterations: int = 14     # learning starts at max(batch, 10 x envs) rows: iteration 10 here
    num_envs: int = 16
    batch_size: int = 128
    seed: int = 0
    model: str | None = None
    mutation: str | None = None
    timeout_s: float = 180.0
    extra: dict = field(default_factory=dict)  # the trainer's --extra (learner settings); empty: reference sizes


def recorded_trainer_settings(s: TrainerProbeSettings) -> dict:
    """The settings a trainer-path probe of `s` writes into its record."""
    return {
        "mode": "trainer",
        "world_size": len(s.devices),
        "devices": s.devices,
        "iterations": s.iterations,
        "num_envs": s.num_envs,
        "batch_per_rank": s.batch_size,
        "mutation": s.mutation,
        **({"learner_overrides": dict(s.extra)} if s.extra else {}),
    }
