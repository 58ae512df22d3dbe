"""The names of the learner's state tensors and gradient buckets, without torch: the
learner (sacscale.learn.learner) builds its state under them, the correctness probe
compares them, and verify derives from them what a probe's record must name."""

from __future__ import annotations

# the optimizers' flat gradient buckets, in the order their hooks first run in an iteration
BUCKET_NAMES = ("critic", "alpha", "actor")  # and "obs_stats" with observation normalisation
# FastSACLearner.state_tensors(): the flat parameters and log-alpha ...
STATE_TENSORS = ("actor", "critic", "target_critic", "log_alpha")
# ... and, with observation normalisation, the running statistics and the normalisers set from them
OBS_NORM_FIELDS = ("actor_obs", "critic_obs")
OBS_NORM_STATE_TENSORS = (*(f"{field}_{stat}" for field in OBS_NORM_FIELDS for stat in ("count", "mean", "var")),
                          *(f"{field}_{part}" for field in OBS_NORM_FIELDS for part in ("shift", "scale")))
# The dtype of each state tensor (torch's name): float32 but for the statistics' row counts,
# float64 so that a count keeps growing past 2**24 rows (sacscale.learn.normalizer)
STATE_DTYPE = "float32"
COUNT_DTYPE = "float64"
# What a rank's seed decides: the networks' initial weights (the target critic starts as a
# copy of the critic); log-alpha starts from alpha_init and the statistics from zero on every rank.
SEEDED_STATE = ("actor", "critic", "target_critic")
COPIES = {"target_critic": "critic"}
# log-alpha is one number, and its bucket ("alpha") holds its one gradient
ONE_NUMBER = ("log_alpha", "alpha")


def state_tensor_names(obs_norm: bool) -> tuple[str, ...]:
    """The keys of FastSACLearner.state_tensors() for a learner with or without observation
    normalisation."""
    return STATE_TENSORS + (OBS_NORM_STATE_TENSORS if obs_norm else ())


def state_tensor_dtype(name: str) -> str:
    """The dtype (torch's name) the learner's state tensor `name` has."""
    return COUNT_DTYPE if name.endswith("_count") else STATE_DTYPE
