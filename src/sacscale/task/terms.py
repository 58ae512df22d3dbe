"""Names of G1WalkFlat's reward terms, in the order of its weight vector (light to import:
the collector's shared-memory layout and the learner's logging use them too)."""

REWARD_TERMS = (
    "tracking_lin_vel",
    "tracking_ang_vel",
    "ang_vel_xy",
    "orientation",
    "action_rate",
    "pose",
    "feet_orientation",
    "feet_phase",
    "alive",
)
