"""A run's envs per rank against what its own commands cannot rewrite: the trainer adds
num_envs to a rank's env steps once an iteration (sacscale.train.rank: no warm-up steps are
counted apart), so a completed run's train_meta.json `rank0_env_steps` is iterations x
num_envs, and the events (through the metrics verify recomputes from them) count num_envs
a rank per logged iteration: each rank's last `Perf/rank_env_steps` is its iterations x
num_envs, and a window's env steps are its iterations x num_envs (x the world size for the
all-ranks total). num_envs here is the one the records agree on (plan, command, train_meta)."""

from __future__ import annotations
from sacscale.number_kinds import is_number


def _window_problem(where: str, window, per_iteration: int) -> str | None:
    """A window's env steps against its iterations x the env steps of one iteration."""
    if not isinstance(window, dict) or not all(is_number(window.get(k)) for k in ("first_step", "last_step",
                                                                                "env_steps")):
        return None
    iterations = window["last_step"] - window["first_step"]
    if window["env_steps"] == iterations * per_iteration:
        return None
    return (f"{where} window counts {window['env_steps']:g} env steps over {iterations:g} iterations, "
            f"not {per_iteration} an iteration")


def env_step_problems(name: str, num_envs, iterations, meta: dict, metrics: dict) -> list[str]:
    if not is_number(num_envs) or num_envs < 1:
        return []  # not agreed on: named by the records check
    said = f"its records say {num_envs} envs per rank"
    problems = []
    steps = meta.get("rank0_env_steps")
    if meta.get("status") == "completed" and is_number(steps) and is_number(iterations) \
            and steps != iterations * num_envs:
        problems.append(f"{name}: env steps: train_meta.json rank0_env_steps {steps!r} is not {iterations} "
                        f"iterations x {num_envs} envs ({said})")
    world = metrics.get("world_size")
    if is_number(world):
        problem = _window_problem("the events' all-ranks", metrics.get("window"), num_envs * world)
        problems += [f"{name}: env steps: {problem} ({said}, {world} rank(s))"] if problem else []
    for rank in metrics.get("ranks") or []:
        if not isinstance(rank, dict):
            continue
        where = f"rank {rank.get('rank')}'s events"
        last, done = rank.get("env_steps"), rank.get("iterations")
        if is_number(last) and is_number(done) and last != done * num_envs:
            problems.append(f"{name}: env steps: {where} count {last:g} after {done} iterations, not "
                            f"{num_envs} an iteration ({said})")
        problem = _window_problem(where, rank.get("window"), num_envs)
        problems += [f"{name}: env steps: {problem} ({said})"] if problem else []
    return problems
