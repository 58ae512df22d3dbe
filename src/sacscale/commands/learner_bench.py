"""`sacscale learner-bench`: ms per learner iteration in eager/compile/graph/compile+graph modes."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from sacscale.atomic import write_json
from sacscale.checks import InputError, check_learner_values
from sacscale.commands._output_lock import holding_outputs
from sacscale.learn.bench_modes import MODES
from sacscale.train.config import TASK_SIZES, extra_key_problem
from sacscale.train.options import json_setting
from sacscale.train.out_of_memory import is_out_of_memory
from sacscale.usage import say

if TYPE_CHECKING:
    from sacscale.learn.config import SACConfig


def _json_object(text: str) -> dict:
    """--extra's type: read as the trainer reads its --extra (a key given twice, JSON nested
    too deep), a JSON object; a malformed value is a usage error (exit 2)."""
    value = json_setting(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"not a JSON object: {text[:80]}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:

    parser.add_argument("--modes", nargs="+", choices=sorted(MODES),
                        default=["eager", "compile", "graph", "compile+graph"],
                        help="modes to time, one learner each")
    parser.add_argument("--batch", type=int, default=8192, help="batch size per update")
    parser.add_argument("--iters", type=int, default=100, help="timed iterations per mode")
    parser.add_argument("--warmup", type=int, default=3, help="untimed iterations after the first")
    parser.add_argument("--num-envs", type=int, default=2048, help="sets the replay size (512 rows per env)")
    parser.add_argument("--device", default="cuda", help="torch device (cpu runs eagerly)")
    parser.add_argument("--extra", default={}, type=_json_object,
                        help="JSON object of SACConfig overrides, e.g. '{\"gamma\": 0.99}'")
    parser.add_argument("--out", default=None, help="write the results as JSON here")


# settings with an option of their own here: given in --extra too, --batch replaced it unseen,
# and a replay size there failed in the learner as unexpected
OWN_OPTIONS = {"batch_size": "--batch", "replay_per_env": "--num-envs, at 512 rows per env"}

# sizes a learner-bench can mean: a batch and replay up to about a million rows per env
_BOUNDS = {"batch": (1, 1 << 20), "iters": (1, 1_000_000), "warmup": (0, 1_000_000), "num_envs": (1, 1 << 20)}


def _problem(args: argparse.Namespace) -> str | None:
    """What the options ask that cannot be benchmarked: a mode twice, --extra settings the
    trainer refuses (NaN, a string gamma: benchmarked as given)."""
    twice = next((m for i, m in enumerate(args.modes) if m in args.modes[:i]), None)
    if twice:
        return f"--modes: {twice!r} is given twice"
    sized = [key for key in args.extra if key in TASK_SIZES]
    if sized:  # timed as given, the figure was of another learner than the task's, with no word
        return f"--extra {sized[0]}: the task's own size, which its model fixes; the benchmark times the task's learner"
    for key in args.extra:
        if problem := extra_key_problem(key, OWN_OPTIONS, "learner-bench's own option", "the benchmark's results"):
            return problem
    try:
        # with the batch this bench runs: the learner's size as a whole is the batch's too
        check_learner_values({**args.extra, "batch_size": args.batch}, set(args.extra), flags={"batch_size": "--batch"})
    except InputError as exc:
        return str(exc)
    return None


def _replay_problem(args: argparse.Namespace, cfg: SACConfig) -> str | None:
    """A learning start the replay cannot hold (as the trainer checks it at its start): the
    learner refused it after the options were read, as unexpected."""
    capacity = cfg.replay_capacity(args.num_envs)
    starts = cfg.replace(batch_size=args.batch).learning_starts_rows(args.num_envs)
    if starts <= capacity:
        return None
    why = "--extra learning_starts" if cfg.learning_starts is not None else "max(--batch, 10 x --num-envs)"
    return (f"learning starts at {starts} rows ({why}) but the replay holds {capacity} rows "
            f"({cfg.replay_per_env} per env x --num-envs {args.num_envs})")


def _device_problem(text: str) -> str | None:
    """Why the learner cannot run on `--device text` here (a RuntimeError or AssertionError
    at the first tensor, exit 1, named no option), or None."""
    import torch

    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        return f"--device {text!r}: not a torch device (cpu, cuda or cuda:N)"
    if device.type not in ("cpu", "cuda"):
        return f"--device {text!r}: the learner runs on cpu or cuda"
    if device.type == "cuda" and (device.index or 0) >= (torch.cuda.device_count() if torch.cuda.is_available() else 0):
        return f"--device {text!r}: no such CUDA device here ({torch.cuda.device_count()} visible)"
    return None


def run(args: argparse.Namespace) -> int:
    for name, (low, high) in _BOUNDS.items():
        if not low <= getattr(args, name) <= high:
            say(f"sacscale learner-bench: error: --{name.replace('_', '-')} {getattr(args, name)}: must be "
                f"{low}..{high}", file=sys.stderr)
            return 2
    problem = _problem(args)
    if problem:
        say(f"sacscale learner-bench: error: {problem}", file=sys.stderr)
        return 2
    # torch loads here, after the checks of the options' values: a refusal answers without it
    from sacscale.learn.bench import bench_learner
    from sacscale.learn.config import SACConfig

    try:
        cfg = SACConfig(**args.extra)
    except (TypeError, ValueError) as exc:  # an unknown or invalid setting
        say(f"sacscale learner-bench: error: --extra: {exc}", file=sys.stderr)
        return 2
    problem = _replay_problem(args, cfg) or _device_problem(args.device)
    if problem:
        say(f"sacscale learner-bench: error: {problem}", file=sys.stderr)
        return 2
    with holding_outputs(("--out", args.out)):  # another command writing it meanwhile: refused at once
        results = []
        for mode in args.modes:
            try:
                r = bench_learner(mode, batch=args.batch, iters=args.iters, num_envs=args.num_envs,
                                  device=args.device, cfg=cfg, warmup=args.warmup)
            except (RuntimeError, MemoryError) as exc:
                if not is_out_of_memory(exc):
                    raise
                say(f"sacscale learner-bench: error: out of memory on --device {args.device}: the learner needs "
                    f"more than it holds at --batch {args.batch} with actor_hidden {list(cfg.actor_hidden)}, "
                    f"critic_hidden {list(cfg.critic_hidden)} and --num-envs {args.num_envs}; give smaller ones",
                    file=sys.stderr)
                return 2
            results.append(r)
            print(f"{mode:>14}: {r['ms_per_iter']:8.3f} ms/iter  first iteration {r['time_to_first_iter_s']:7.2f} s  "
                  f"(compiled={r['compiled']}, graphed={r['graphed']}, finite={r['metrics_finite']})", flush=True)
        if args.out:
            write_json(args.out, results)  # atomic: never written through a link, never half a file
    return 0 if all(r["metrics_finite"] for r in results) else 1
