"""The collector process of one rank, and the learner-side handle that drives it.

The collector owns the rank's simulation pool: it pins itself to the rank's CPU list
(so the batch's worker threads inherit the mask while the learner process keeps its
own), steps all envs with the CPU actor on the latest published weights, and writes each
env step into a free slot of the shared double buffer. Stepping t+1 overlaps the
learner's update on t: the learner frees slot t once it has updated on it and published
the weights, and the collector needs that slot again for step t+2. The envs step as two
halves that take turns on the pool (sacscale.task.halves), so the actor and task work of
one half overlap the other half's physics; each half fills its own rows of the slot, and
a step is handed over as soon as its second half is finished.

Every blocking wait on either side has a timeout and a liveness check, so a dead peer
ends the job with a message naming it instead of a hang.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass

import numpy as np

from sacscale.collect.shm import STAT_INDEX, Flag, Signal, SlotSpec, TransitionSlots, WeightBlock, unlink_prefix
from sacscale.processes import SpawnedChild, describe_exit, die_with_parent, is_stopped
from sacscale.task.terms import REWARD_TERMS
from sacscale.task.walk_rules import ACTION_DIM, ACTOR_OBS_DIM, CRITIC_OBS_DIM, TaskConfig
from sacscale.usage import escape_what_the_encoding_cannot_hold

POLL_S = 0.2  # how often a blocked wait re-checks that its peer is alive


class CollectorError(RuntimeError):
    """The collector of a rank died, failed, or stopped producing data."""


@dataclass
class CollectorConfig:
    rank: int
    shm_prefix: str
    model_path: str | None
    num_envs: int
    sim_threads: int
    seed: int
    cpu_ids: list[int] | None
    torch_threads: int
    actor_numel: int
    actor_kwargs: dict
    pipeline: str = "halves"  # how the envs take turns on the pool: sacscale.task.halves
    tilt_obs: str = "world"  # the task's tilt input: sacscale.task.g1_walk_flat.TaskConfig
    curriculum: tuple[float, float] | None = None  # (penalty scale, mean episode length) to continue from

    @property
    def spec(self) -> SlotSpec:
        return SlotSpec(self.num_envs, ACTOR_OBS_DIM, CRITIC_OBS_DIM, ACTION_DIM)


def _flat_actor(actor_kwargs: dict, numel: int):
    """A CPU actor whose published tensors (parameters, normaliser) are views into one
    flat tensor (cheap weight loads)."""
    # only once the collector is pinned (see _collect)
    import torch
    from sacscale.learn.networks import Actor

    actor = Actor(**actor_kwargs)
    flat = torch.zeros(numel, dtype=torch.float32)
    offset = 0
    for p in actor.published_tensors():
        n = p.numel()
        p.data = flat[offset : offset + n].view_as(p)
        offset += n
    if offset != numel:
        raise CollectorError(f"actor publishes {offset} values, the weight block holds {numel}")
    actor.requires_grad_(False)
    return actor, flat


def collector_main(cfg: CollectorConfig, filled, free, stop, slots=None, weights=None) -> None:
    """Entry point of the collector process (spawned); `slots` and `weights` arrive as
    inherited descriptors of the learner's (already unlinked) blocks.

    It dies with its learner (PR_SET_PDEATHSIG), even one that was SIGKILLed, and ignores
    SIGINT and SIGHUP: a Ctrl-C or a hang-up reaches the whole process group, and the
    learner stops its collector itself (stop flag, then SIGTERM, then SIGKILL) on the way out."""
    die_with_parent(signal.SIGKILL)
    escape_what_the_encoding_cannot_hold()  # a spawned process starts with Python's stream settings
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        _collect(cfg, filled, free, stop, slots, weights)
    except Exception:
        sys.stderr.write(f"[collector rank {cfg.rank}] failed:\n{traceback.format_exc()}")
        sys.stderr.flush()
        os._exit(1)
    # Stopped: exit now. The interpreter's teardown (torch, MuJoCo) would take a second
    # or more of the learner's bounded shutdown, and there is nothing left to flush.
    sys.stderr.flush()
    os._exit(0)


def _collect(cfg: CollectorConfig, filled, free, stop, slots, weights) -> None:
    parent = os.getppid()
    if cfg.cpu_ids:
        # The whole collector (simulation threads and its numpy/actor work) runs on the pool.
        os.sched_setaffinity(0, cfg.cpu_ids)
    # only now, pinned: torch and MuJoCo size their thread pools at import, to the pool's CPUs
    import torch
    from sacscale.task.g1_model import load_model
    from sacscale.task.halves import EnvHalves, rounds

    torch.set_num_threads(max(1, cfg.torch_threads))
    envs = EnvHalves(load_model(cfg.model_path), cfg.num_envs, cfg.sim_threads, cfg.seed, pipeline=cfg.pipeline,
                     config=TaskConfig(tilt_obs=cfg.tilt_obs))
    if cfg.curriculum is not None:  # a resumed run continues its curriculum
        envs.curriculum.scale, envs.curriculum.mean_length = map(float, cfg.curriculum)
    actor, flat = _flat_actor(cfg.actor_kwargs, cfg.actor_numel)
    flat_np = flat.numpy()
    version = weights.read_into(flat_np, give_up=stop.is_set)
    generator = torch.Generator().manual_seed(cfg.seed + 7919)
    last = len(envs.parts) - 1
    shares = [part.num_envs / cfg.num_envs for part in envs.parts]  # for the slot's reward means
    # Main-thread milliseconds since the last slot was handed over, by phase; the env's
    # own time comes from the step outputs.
    spent = dict.fromkeys(("weight_sync_ms", "action_select_ms", "replay_write_ms"), 0.0)
    started = 0  # rounds of steps started; round r fills slot r % 2

    def act(i: int, actor_obs: np.ndarray, critic_obs: np.ndarray) -> np.ndarray:
        """Part i's actions for the next round, written with its observations into its slot."""
        nonlocal version, started
        k = started % 2
        t0 = time.perf_counter()
        if i == 0:
            # Wait for the slot first: the learner frees it only after publishing the
            # weights it trained on the slot's previous contents, so the actions below use
            # weights at most one iteration old however the two sides' speeds compare.
            while not free[k].acquire(timeout=POLL_S):
                if stop.is_set() or os.getppid() != parent:
                    raise _Stopped  # the learner stopped or died: nothing to deliver to
        t1 = time.perf_counter()
        if i == 0 and weights.version() != version:
            try:
                version = weights.read_into(flat_np, give_up=lambda: stop.is_set() or os.getppid() != parent)
            except InterruptedError:
                raise _Stopped from None
        t2 = time.perf_counter()
        with torch.no_grad():
            obs_t = torch.from_numpy(actor_obs)
            noise = torch.randn(obs_t.shape[0], envs.parts[i].ACTION_DIM, generator=generator)
            actions = actor.act(obs_t, noise=noise).numpy()
        t3 = time.perf_counter()
        slot, rows = slots.slots[k], envs.rows[i]
        np.copyto(slot["actor_obs"][rows], actor_obs)
        np.copyto(slot["critic_obs"][rows], critic_obs)
        np.copyto(slot["action"][rows], actions)
        spent["weight_sync_ms"] += 1e3 * (t2 - t1)
        spent["action_select_ms"] += 1e3 * (t3 - t2)
        # replay write: waiting for a free slot plus copying into it
        spent["replay_write_ms"] += 1e3 * ((t1 - t0) + (time.perf_counter() - t3))
        if i == last:
            slots.stats[k][STAT_INDEX["weights_version"]] = version
            started += 1
        return actions

    stepping = rounds(envs, act)
    finished = 0  # rounds handed to the learner
    try:
        while not stop.is_set():
            outs = next(stepping)  # round `finished`, done; the first half already runs the next
            done = finished % 2
            finished += 1
            t0 = time.perf_counter()
            slot, stats = slots.slots[done], slots.stats[done]
            for rows, out in zip(envs.rows, outs):
                np.copyto(slot["reward"][rows], out.reward)
                np.copyto(slot["next_actor_obs"][rows], out.next_actor_obs)
                np.copyto(slot["next_critic_obs"][rows], out.next_critic_obs)
                np.copyto(slot["terminated"][rows], out.terminated)
            _write_stats(stats, outs, shares, envs.curriculum)
            spent["replay_write_ms"] += 1e3 * (time.perf_counter() - t0)
            for name, ms in spent.items():
                stats[STAT_INDEX[name]] = ms
                spent[name] = 0.0
            filled[done].release()
    except _Stopped:
        pass
    finally:
        stepping.close()
        envs.close()


class _Stopped(Exception):
    """Raised inside the stepping loop when the learner stopped or died."""


def _write_stats(stats: np.ndarray, outs: list, weights: list[float], curriculum) -> None:
    """One slot's statistics from its parts' step outputs (weights: their env shares)."""
    version = stats[STAT_INDEX["weights_version"]]
    stats[:] = 0.0
    stats[STAT_INDEX["weights_version"]] = version
    for out, w in zip(outs, weights):
        info = out.info
        returns = np.asarray(info.get("episode_return", ()), dtype=np.float64)
        lengths = np.asarray(info.get("episode_length", ()), dtype=np.float64)
        stats[STAT_INDEX["episode_return_sum"]] += returns.sum()
        stats[STAT_INDEX["episode_length_sum"]] += lengths.sum()
        stats[STAT_INDEX["episode_count"]] += returns.size
        for term in REWARD_TERMS:
            stats[STAT_INDEX[f"reward_{term}"]] += w * float(info.get(f"reward/{term}", np.nan))
            stats[STAT_INDEX[f"reward_raw_{term}"]] += w * float(info.get(f"reward_raw/{term}", np.nan))
        stats[STAT_INDEX["falls"]] += float(info.get("falls", 0))
        stats[STAT_INDEX["sim_errors"]] += float(info.get("sim_errors", 0))
        # the env's time: its task work plus the waits for its physics; and the pool's
        stats[STAT_INDEX["env_step_ms"]] += 1e3 * (info["time/task_s"] + info["time/physics_wait_s"])
        stats[STAT_INDEX["physics_ms"]] += 1e3 * info["time/physics_s"]
        stats[STAT_INDEX["physics_wait_ms"]] += 1e3 * info["time/physics_wait_s"]
    # the halves' shared curriculum, after the round (a checkpoint keeps it)
    stats[STAT_INDEX["penalty_scale"]] = curriculum.scale
    stats[STAT_INDEX["curriculum_mean_length"]] = curriculum.mean_length


class CollectorHandle:
    """Learner side: owns the shared blocks, starts and watches the collector process."""

    def __init__(self, cfg: CollectorConfig, startup_timeout_s: float = 300.0, step_timeout_s: float = 120.0):
        self.cfg = cfg
        self.startup_timeout_s = startup_timeout_s
        self.step_timeout_s = step_timeout_s
        ctx = mp.get_context("spawn")
        self.slots = TransitionSlots(f"{cfg.shm_prefix}_slots", cfg.spec)
        self.weights = WeightBlock(f"{cfg.shm_prefix}_weights", cfg.actor_numel)
        # pipes, not multiprocessing's named semaphores: nothing outlives the processes
        self._filled = [Signal(0) for _ in range(TransitionSlots.NUM_SLOTS)]
        self._free = [Signal(1) for _ in range(TransitionSlots.NUM_SLOTS)]
        self._stop = Flag()
        # spawned, not started as a command (sacscale.processes.start_group): it inherits the
        # blocks' descriptors, and stays in our process group; the supervisor still ends it
        self.process = ctx.Process(
            target=collector_main,
            args=(cfg, self._filled, self._free, self._stop, self.slots, self.weights),
            name=f"sacscale-collector-r{cfg.rank}",
            daemon=True,
        )
        self._next = 0
        self._received = 0

    def start(self, initial_weights: np.ndarray) -> None:
        self.weights.publish(initial_weights)
        self.process.start()

    def describe(self) -> str:
        return f"collector of rank {self.cfg.rank} (pid {self.process.pid})"

    def receive(self, check_stop=None) -> tuple[dict[str, np.ndarray], np.ndarray, int]:
        """Block until the next slot is filled; returns (arrays, stats, slot index).
        `check_stop()` runs at every poll (it raises to end the wait on a stop request)."""
        k = self._next
        timeout = self.startup_timeout_s if self._received == 0 else self.step_timeout_s
        deadline = time.monotonic() + timeout
        while not self._filled[k].acquire(timeout=POLL_S):
            if check_stop is not None:
                check_stop()  # before the exit code: a group signal may have ended the collector too
            code = self.process.exitcode
            if code is not None:
                how = describe_exit(code) + ("" if code < 0 else " (see its traceback above, if any)")
                raise CollectorError(f"{self.describe()} {how}")
            if time.monotonic() > deadline:
                raise CollectorError(f"{self.describe()} produced no data for {timeout:.0f} s")
        self._next ^= 1
        self._received += 1
        return self.slots.slots[k], self.slots.stats[k], k

    def release(self, k: int) -> None:
        self._free[k].release()

    def publish(self, weights: np.ndarray) -> int:
        return self.weights.publish(weights)

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop the collector (escalating to SIGKILL) and unlink the shared blocks."""
        self._stop.set()
        if self.process.pid is not None:
            collector = SpawnedChild(self.process)
            # first a chance to see the stop flag and exit, unless SIGSTOP keeps it from doing so
            left = collector.wait(timeout_s, stop=lambda: is_stopped(collector.pid), poll_s=0.05)
            if left.code is None:
                collector.end(signal.SIGTERM, timeout_s, kill_frozen=True, reap_s=timeout_s)
        self.slots.close()
        self.weights.close()
        for pipe in (*self._filled, *self._free, self._stop):
            pipe.close()
        unlink_prefix(self.cfg.shm_prefix)  # nothing to find unless creation was cut short

