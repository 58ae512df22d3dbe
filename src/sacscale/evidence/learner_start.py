"""When a run's learner first updates, derived from its recorded config (train_meta.json
`config`), not from the events: a forger who deletes the learner's tags at early steps moves
the first step they show, the config stays. The trainer adds `num_envs` rows a rank to its
replay each iteration and updates from the first iteration at whose end the replay holds
`learning_starts` rows (sacscale.train.rank; SACConfig.learning_starts_rows: the `extra`
setting, else max(batch size, 10 x num_envs)), and logs the learner's tags from the first
log point at or after it (sacscale.train.logs)."""

from __future__ import annotations

from sacscale.learn.learning_start import learning_starts_rows


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def first_update_iteration(config) -> int | None:
    """The iteration of the learner's first update in a run's first sitting (past its
    `iterations`: it never updates); None where the config is not a trainer's (older or
    hand-made records). `extra` overrides the batch size as the trainer's (train.config.sac_config)."""
    if not isinstance(config, dict):
        return None
    extra = config.get("extra") if isinstance(config.get("extra"), dict) else {}
    num_envs, batch = _count(config.get("num_envs")), _count(extra.get("batch_size", config.get("batch_size")))
    starts = extra.get("learning_starts")
    if num_envs is None or batch is None or (starts is not None and _count(starts) is None):
        return None
    return -(-learning_starts_rows(starts, batch, num_envs) // num_envs)


def first_learner_log(config) -> int | None:
    """The first log point at which the trainer writes the learner's tags (past `iterations`:
    none); None where the config does not say."""
    update, every, iterations = first_update_iteration(config), _get(config, "log_every"), _get(config, "iterations")
    if update is None or every is None or iterations is None or every <= 0:
        return None
    logged = -(-update // every) * every
    return min(logged, iterations) if update <= iterations else update


def seed_alone_until(config) -> int | None:
    """The last step whose episode values the seed alone may decide: the envs act with the
    initial weights up to the first update and one iteration of policy lag after it, and a
    value logged at a step sums the episodes of the interval ending there."""
    update, every = first_update_iteration(config), _get(config, "log_every")
    if update is None or every is None or every <= 0:
        return None
    return update + every


def _get(config, key: str) -> int | None:
    return _count(config.get(key)) if isinstance(config, dict) else None


def first_update_why(config) -> str:
    """How the recorded config gives the first update, for the messages."""
    extra = config.get("extra") if isinstance(config.get("extra"), dict) else {}
    update, envs = first_update_iteration(config), config.get("num_envs")
    if "learning_starts" in extra:
        rows = f"extra learning_starts {extra['learning_starts']} rows"
    else:
        batch = extra.get("batch_size", config.get("batch_size"))
        rows = f"max(batch size {batch}, 10 x {envs} envs) rows"
    return f"train_meta.json config: {rows} at {envs} a rank an iteration give its first update at iteration {update}"
