"""The G1WalkFlat task: model building (g1_model), the vectorised environment
(g1_walk_flat), the task's rules apart from the simulation (walk_rules), the two-halves
collector order (halves) and the reward term names (terms). Nothing is imported here, so
`sacscale.task.terms` and `sacscale.task.walk_rules` stay light (no MuJoCo)."""
