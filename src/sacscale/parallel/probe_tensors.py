"""What the correctness probe compares and how it states a difference, without torch: the
probe (sacscale.parallel.probe, sacscale.train.probe) builds its comparisons from these, and
verify (sacscale.evidence.probe_measures) derives from them what a record must name and
which of its numbers must agree."""

from __future__ import annotations

from sacscale.learn.state_names import BUCKET_NAMES, state_tensor_names

# a scale below this is taken as this: a difference against a zero scale stays finite
SCALE_FLOOR = 1e-30
KINDS = ("param", "grad", "sync")


def floored(scale: float) -> float:
    """The scale a comparison records (and divides by)."""
    return max(scale, SCALE_FLOOR)


def relative(abs_diff: float, scale: float) -> float:
    """A difference relative to its scale: `max_rel_diff` of `max_abs_diff` and `scale`, and
    `norm_rel_diff` of the 2-norms of the difference and of the scale."""
    return abs_diff / floored(scale)


def compared_tensors(mode: str, obs_norm: bool = False, sync: bool = True) -> tuple[str, ...]:
    """The comparisons a probe record holds, in the probe's order. learner: every state
    tensor (param/, normwise), every gradient bucket (grad/) and, since the sync is judged
    (`sync`), the sync of every bucket (sync/); trainer: the sync of every bucket."""
    syncs = tuple(f"sync/{bucket}" for bucket in BUCKET_NAMES) if sync else ()
    if mode == "trainer":
        return syncs
    return (*(f"param/{key}" for key in state_tensor_names(obs_norm)),
            *(f"grad/{bucket}" for bucket in BUCKET_NAMES), *syncs)
