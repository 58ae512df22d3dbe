"""What a rank logs: TensorBoard scalars at each log point (sums over the interval since
the previous one), rank 0's progress bar, and the lines written above it."""

from __future__ import annotations

import math
import sys
import threading
import time

import torch.distributed as dist
from tqdm import tqdm

from sacscale.task.terms import REWARD_TERMS
from sacscale.train.config import TrainConfig, TrainingError
from sacscale.train.log_tags import COLLECTOR_PHASES, LEARNER_METRIC_TAGS, LEARNER_PHASES


class Interval:
    """Sums of collector stats and learner phase times between two log points."""

    def __init__(self):
        self.total0 = 0  # all ranks' env steps at the previous log point
        self.nonfinite_named = False  # the first dropped non-finite row has been named in the log
        self.nonfinite_targets_named = False  # ... and the first non-finite critic target
        self.reset(time.perf_counter(), 0)

    def reset(self, now: float, steps: int) -> None:
        self.t0, self.steps0 = now, steps
        self.iters = 0
        self.sums: dict[str, float] = {}

    def add(self, key: str, value: float) -> None:
        if not math.isnan(value):
            self.sums[key] = self.sums.get(key, 0.0) + value


def log_interval(writer, learner, interval: Interval, it: int, steps: int, counter, distributed: bool, rank: int,
                 bar, trace: bool) -> None:
    """Write the interval's scalars at step `it` and start the next interval."""
    # the events' wall time is the one read with the interval's clock, not each write's: the
    # all-reduce, the learner's metrics and the writes after it can take a loaded machine's
    # 0.25 s, which would lengthen this interval's wall time and shorten the next one's
    now, wall = time.perf_counter(), time.time()
    dt = max(now - interval.t0, 1e-9)
    rank_fps = (steps - interval.steps0) / dt
    total_steps = _all_ranks_env_steps(counter, steps, distributed)
    total_fps = (total_steps - interval.total0) / dt
    interval.total0 = total_steps

    metrics = _learner_metrics(learner, it, rank)
    nonfinite = nonfinite_scalars(learner, interval, it, rank, bar)
    s, n = interval.sums, max(interval.iters, 1)
    scalars = {
        "Perf/rank_env_steps": steps,
        "Perf/rank_fps": rank_fps,
        "Perf/iteration": it,
        "Curriculum/penalty_scale": s.get("penalty_scale", math.nan),
        "Env/sim_errors": s.get("sim_errors", 0.0),
        "Train/policy_lag": s.get("policy_lag_max", 0.0),
        **nonfinite,
    }
    if rank == 0:
        scalars["Perf/total_env_steps"] = total_steps
        scalars["Perf/total_fps"] = total_fps
    scalars.update(_reward_scalars(s, n))
    scalars.update(_episode_scalars(s))
    scalars.update({tag: metrics[key] for key, tag in LEARNER_METRIC_TAGS if key in metrics})
    if trace:
        scalars.update(_phase_scalars(s, n))
    _write_scalars(writer, scalars, it, wall)
    if bar is not None:
        bar.set_postfix(fps=f"{total_fps:,.0f}", ret=f"{scalars.get('Episode/return', math.nan):.2f}", refresh=False)
    interval.reset(now, steps)


def _all_ranks_env_steps(counter, steps: int, distributed: bool) -> int:
    """Every rank's cumulative env steps (an all-reduce when there are several ranks)."""
    counter.fill_(float(steps))
    if not distributed:
        return steps
    dist.all_reduce(counter)
    return int(counter.item())


def _learner_metrics(learner, it: int, rank: int) -> dict:
    metrics = learner.metrics() if learner.ready() else {}
    bad = [k for k, v in metrics.items() if not math.isfinite(v)]
    if bad:
        raise TrainingError(f"rank {rank}: diverged at iteration {it}: non-finite learner metrics {bad}")
    return metrics


def _reward_scalars(sums: dict, n: int) -> dict:
    """Every reward term, mean over envs and over the interval's iterations: Reward/ its
    weighted share of the per-step reward, RewardRaw/ the unweighted term."""
    out = {}
    for term in REWARD_TERMS:
        out[f"Reward/{term}"] = sums.get(f"reward_{term}", math.nan) / n
        out[f"RewardRaw/{term}"] = sums.get(f"reward_raw_{term}", math.nan) / n
    return out


def _episode_scalars(sums: dict) -> dict:
    """Means over the episodes that ended in the interval (none: no scalar)."""
    count = sums.get("episode_count", 0)
    if not count > 0:
        return {}
    return {"Episode/return": sums["episode_return_sum"] / count,
            "Episode/length": sums["episode_length_sum"] / count,
            "Episode/fall_rate": sums.get("falls", 0.0) / count}  # of the ended episodes, fell


def _phase_scalars(sums: dict, n: int) -> dict:
    out = {f"Time/collector_{phase}": sums.get(phase, 0.0) / n for phase in COLLECTOR_PHASES}
    out.update({f"Time/{phase}": sums.get(phase, 0.0) / n for phase in LEARNER_PHASES})
    return out


def _write_scalars(writer, scalars: dict, it: int, wall: float) -> None:
    for tag, value in scalars.items():
        if isinstance(value, float) and math.isnan(value):
            continue
        writer.add_scalar(tag, value, it, walltime=wall)
    writer.flush()


def nonfinite_scalars(learner, interval: Interval, it: int, rank: int, bar) -> dict[str, int]:
    """The learner's non-finite counters as scalars (read at log time: the hot path only
    counts on the device), and, once per run, a line naming the first dropped row."""
    counts = learner.nonfinite_counts()
    if counts["nonfinite_rows"] and not interval.nonfinite_named:
        first = learner.replay.describe_first_nonfinite()
        at = it - (learner.replay.adds - 1 - first["add"])  # one add per iteration
        say_above_bar(bar, f"sacscale train: rank {rank}: dropped a non-finite transition at iteration {at}: "
                           f"env {first['row']}, field(s) {', '.join(first['fields'])} (never sampled; "
                           f"Faults/nonfinite_rows counts every such row)")
        interval.nonfinite_named = True
    if counts["nonfinite_targets"] and not interval.nonfinite_targets_named:
        # the replay never samples a dropped row: these targets came from rows that passed
        # its check, so from the learner's own numbers (or memory changed behind the check)
        sources = ", ".join(f"{name} {n}" for name, n in learner.nonfinite_target_sources().items() if n)
        say_above_bar(bar, f"sacscale train: rank {rank}: {counts['nonfinite_targets']} critic target(s) not finite "
                           f"by iteration {it} although their rows passed the replay's check (not finite: "
                           f"{sources or 'none of the inputs counted'}); given no mass "
                           f"(Faults/nonfinite_targets counts them)")
        interval.nonfinite_targets_named = True
    return {"Faults/nonfinite_rows": counts["nonfinite_rows"], "Faults/nonfinite_targets": counts["nonfinite_targets"]}


def say_above_bar(bar, message: str) -> None:
    """One line on stderr that does not break rank 0's progress bar."""
    if bar is not None:
        bar.write(message, file=sys.stderr)
    else:
        print(message, file=sys.stderr, flush=True)


def progress_bar(cfg: TrainConfig, rank: int, start_it: int = 0):
    """Rank 0's progress bar on stderr (None on other ranks)."""
    if rank != 0:
        return None
    # tqdm's default lock includes a multiprocessing lock: a named semaphore, which a
    # spawned rank (it ends with os._exit) would leave to the resource tracker's warning
    tqdm.set_lock(threading.RLock())
    interactive = sys.stderr.isatty()
    return tqdm(total=cfg.iterations, initial=start_it, desc="train", unit="it", file=sys.stderr,
                mininterval=0.5 if interactive else 10.0, dynamic_ncols=interactive)
