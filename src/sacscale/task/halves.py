"""One rank's envs as parts that take turns on one CPU pool, so the pool never idles.

With one part, a control step is serial: physics on the pool, then the task's numpy work
(observations, rewards, resets) and the CPU actor on the caller's thread while the pool
waits. With two halves the caller works on one half while the other half's physics
runs:

    pool:    | physics A(t) | physics B(t) | physics A(t+1) | ...
    caller:  | B(t-1): finish, act | A(t): finish, act | ...

Each half has its own `mujoco.batch.Batch` with a thread per pool CPU, so one half's
physics uses the whole pool; the halves never step at once. The caller's thread is one
thread more than the pool has CPUs, which costs the physics only the caller's share of a
CPU, the work that was not overlapped before. The halves share one penalty curriculum,
updated once per round, so the task is the same as one env of all the envs.

`rounds` drives the alternation; the caller supplies each part's actions (env-bench
from a fixed set, the collector from its CPU actor, writing the slot as it goes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from sacscale.mujoco_lib import mujoco
from sacscale.task.g1_walk_flat import G1WalkFlat, StepOutput
from sacscale.task.walk_rules import PIPELINES, PenaltyCurriculum, TaskConfig

SEED_STRIDE = 1_000_003  # the second half's seed: far from any seed a user would pick next


class EnvHalves:
    """num_envs G1WalkFlat envs as 1 part ("serial") or 2 halves ("halves")."""

    def __init__(
        self,
        model: mujoco.MjModel,
        num_envs: int,
        num_threads: int,
        seed: int,
        cpu_ids=None,
        *,
        pipeline: str = "halves",
        config: TaskConfig | None = None,
    ):
        if pipeline not in PIPELINES:
            raise ValueError(f"pipeline must be one of {PIPELINES}, got {pipeline!r}")
        if pipeline == "halves" and num_envs < 2:
            raise ValueError(f"pipeline 'halves' needs at least 2 envs, got {num_envs}")
        self.num_envs = int(num_envs)
        self.pipeline = pipeline
        cfg = config or TaskConfig()
        sizes = [num_envs] if pipeline == "serial" else [num_envs // 2, num_envs - num_envs // 2]
        self.curriculum = PenaltyCurriculum(cfg, self.num_envs)
        self.parts: list[G1WalkFlat] = []
        self.rows: list[slice] = []
        start = 0
        for i, size in enumerate(sizes):
            self.parts.append(
                G1WalkFlat(model, size, num_threads, seed + i * SEED_STRIDE, cpu_ids, config=cfg,
                           curriculum=self.curriculum)
            )
            self.rows.append(slice(start, start + size))
            start += size

    def reset(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(actor_obs, critic_obs) of each part."""
        return [part.reset() for part in self.parts]

    def start(self, i: int, actions: np.ndarray) -> float:
        """Start part i's step once the pool is free; returns the seconds waited for it."""
        waited = sum(part.wait_physics() for part in self.parts)
        self.parts[i].start_step(actions)
        return waited

    def close(self) -> None:
        for part in self.parts:
            part.close()


Policy = Callable[[int, np.ndarray, np.ndarray], np.ndarray]


def rounds(envs: EnvHalves, policy: Policy) -> Iterator[list[StepOutput]]:
    """Step every part once per round, forever; yields each round's outputs in part order.

    policy(i, actor_obs, critic_obs) gives part i's next actions. Part i's step is
    finished, and its next actions chosen, while the other half's step runs (serial:
    while nothing runs). A round is yielded as soon as its last part is finished: the
    other half's next step is then already running, the last part's next one starts
    when the caller asks for the next round. Closing the generator leaves started steps
    unfinished (EnvHalves.close waits for their physics)."""
    last = len(envs.parts) - 1
    for i, (actor, critic) in enumerate(envs.reset()):
        envs.start(i, policy(i, actor, critic))
    while True:
        outs = []
        for i, part in enumerate(envs.parts):
            out = part.finish_step()
            outs.append(out)
            if i < last:
                envs.start(i, policy(i, out.actor_obs, out.critic_obs))
        envs.curriculum.update()  # once per round, as one env of all the envs would
        yield outs
        envs.start(last, policy(last, outs[last].actor_obs, outs[last].critic_obs))
