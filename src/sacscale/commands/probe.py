"""`sacscale probe correctness|trainer`: data-parallel gradient sync against a single-process
reference (correctness), and the trainer's own rank code path (trainer; also run by
`correctness --trainer-iterations K`, whose verdict then needs both)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sacscale.checks import seed_arg
from sacscale.atomic import write_json
from sacscale.commands._inputs import model_problem
from sacscale.commands._output_lock import holding_outputs
from sacscale.parallel.probe_settings import AMP_DTYPES, MUTATIONS, ProbeSettings, size_problem
from sacscale.train.config import MAX_ITERATIONS, TrainConfig, TrainingError
from sacscale.train.preflight import check_devices
from sacscale.train.probe_settings import TrainerProbeSettings
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=["correctness", "trainer"],
                        help="correctness: learner ranks vs a single-process reference; trainer: the trainer's "
                             "run_rank with real collectors, ranks must end bit-identical")
    parser.add_argument("--devices", default="auto",
                        help="'cpu,cpu' (2 gloo ranks), '0' (1 GPU: all-reduce captured in the graph, "
                             "world size 1), '0,1' (2 GPUs); auto: 2 GPUs if visible, else 1, else cpu,cpu")
    parser.add_argument("--compile-loss", action="store_true", help="torch.compile the losses (CUDA)")
    parser.add_argument("--iterations", type=int, default=ProbeSettings.iterations,
                        help="full learner iterations to compare")
    parser.add_argument("--batch-size", type=int, default=ProbeSettings.batch_size,
                        help="batch per rank (0: 64 on CPU, 8192 on CUDA)")
    parser.add_argument("--amp-dtype", choices=AMP_DTYPES, default=ProbeSettings.amp_dtype,
                        help="autocast of both sides (float32 isolates the sync math from bf16 rounding)")
    parser.add_argument("--seed", type=seed_arg, default=0,
                        help="random seed of the replay rows and batches; rank r starts from seed + 1000 x r "
                             "(default 0)")
    parser.add_argument("--trainer-iterations", type=int, default=0,
                        help="correctness: also drive the trainer's rank code this many iterations (0: not); "
                             "trainer: iterations (default 14; learning starts at iteration 10)")
    parser.add_argument("--model", help="trainer path: compiled model (.mjb); default: build it from the asset package")
    parser.add_argument("--mutation", choices=MUTATIONS,
                        help="break the sync on purpose (to see the probe fail)")
    parser.add_argument("--timeout-s", type=float, default=600.0, help="longest wait on a peer rank")
    parser.add_argument("--output", required=True, help="JSON file to write")


def _auto_devices() -> str:
    import torch  # here only: the checks before it answer without torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return "0,1" if n >= 2 else "0" if n == 1 else "cpu,cpu"


def _print(result: dict, output: str) -> None:
    judged = [c for c in result.get("comparisons", []) if c.get("tolerance") is not None]
    worst = max(judged, key=lambda c: c["rel_diff"] / c["tolerance"]) if judged else None
    where = (f"worst {worst['tensor']}: {worst['criterion']} rel {worst['rel_diff']:.2e} "
             f"(tolerance {worst['tolerance']:.0e})"
             if worst else "no comparison")
    failed = [k for k, v in (result.get("checks") or {}).items() if not v]
    print(f"probe {result.get('mode')}: {'PASS' if result['pass'] else 'FAIL'} | world size {result['world_size']}"
          + (f" ({result['backend']}), all-reduce in CUDA graph: {result['allreduce_in_cuda_graph']}, "
             f"{result['autocast_dtype']}" if "backend" in result else "")
          + f"; {where}" + (f"; failed: {', '.join(failed)}" if failed else "") + f" -> {output}")


def _run_correctness(args: argparse.Namespace, devices: list[str], trainer: TrainerProbeSettings) -> dict:
    """The learner probe; with --trainer-iterations also the trainer's path, whose result
    goes into the learner probe's file (`trainer_path`) and must pass too."""
    from sacscale.parallel.probe import run_probe
    from sacscale.train.probe import run_trainer_probe

    settings = _learner_settings(args, devices)
    # what runs, before the ranks start: a long probe (many iterations) otherwise says nothing until it ends
    say(f"probe learner: {len(devices)} rank(s) on {','.join(devices)}, {settings.iterations:,} iteration(s) "
        f"compared with a single-process reference ...", file=sys.stderr)
    result = run_probe(settings, args.output, args.timeout_s)
    if not args.trainer_iterations:
        return result
    _print(result, args.output)
    path = Path(args.output)
    side = path.with_name(path.stem + ".trainer.tmp.json")
    try:
        result["trainer_path"] = run_trainer_probe(trainer, str(side))
    finally:
        side.unlink(missing_ok=True)
    result["pass"] = bool(result["pass"] and result["trainer_path"]["pass"])
    write_json(args.output, result)
    return {**result["trainer_path"], "pass": result["pass"]}


def _learner_settings(args: argparse.Namespace, devices: list[str]) -> ProbeSettings:
    return ProbeSettings(devices, args.iterations, args.compile_loss, args.batch_size, seed=args.seed,
                         amp_dtype=args.amp_dtype, mutation=args.mutation)


def _counts_problem(args: argparse.Namespace) -> str | None:
    """Counts out of range; iterations are bounded as train's are (a typo of digits ran on)."""
    if args.iterations < 1 or args.trainer_iterations < 0:
        return "--iterations must be positive, --trainer-iterations >= 0"
    for flag, value in (("--iterations", args.iterations), ("--trainer-iterations", args.trainer_iterations)):
        if value > MAX_ITERATIONS:
            return f"{flag} must be at most {MAX_ITERATIONS:,}, got {value}"
    if args.batch_size < 0:
        return f"--batch-size must be positive (or 0: 64 on CPU, 8192 on CUDA), got {args.batch_size}"
    return None


def run(args: argparse.Namespace) -> int:
    if problem := _counts_problem(args):
        say(f"sacscale probe: error: {problem}", file=sys.stderr)
        return 2
    if not 1 <= args.timeout_s <= 86400:  # also NaN: the ranks' wait could not be bounded
        say(f"sacscale probe: error: --timeout-s {args.timeout_s!r}: must be 1..86400 seconds", file=sys.stderr)
        return 2
    try:
        devices = TrainConfig(devices=_auto_devices() if args.devices == "auto" else args.devices).device_list()
    except TrainingError as exc:  # a malformed --devices: a usage error
        say(f"sacscale probe: error: {exc}", file=sys.stderr)
        return 2
    if args.kind == "correctness" and (problem := size_problem(_learner_settings(args, devices).resolved())):
        say(f"sacscale probe: error: {problem}", file=sys.stderr)  # before any rank grows into it
        return 2
    problem = model_problem(args.model) if args.model is not None else None
    if problem:  # a file that is not the task's model: named here, not by each collector's traceback
        say(f"sacscale probe: error: {problem}", file=sys.stderr)
        return 2
    # torch and TensorBoard load here, after the checks of the options: a refusal answers without them
    from sacscale.train.probe import fewest_iterations, run_trainer_probe

    try:
        check_devices(devices)
        trainer = TrainerProbeSettings(devices, iterations=args.trainer_iterations or 14, seed=args.seed,
                                       model=args.model, mutation=args.mutation, timeout_s=args.timeout_s)
        fewest = fewest_iterations(trainer)
        if trainer.iterations < fewest:  # it would report a broken sync where nothing was synced
            say(f"sacscale probe: error: --trainer-iterations {trainer.iterations}: the learner first updates in "
                f"iteration {fewest} (once its replay holds its learning start's rows); give at least {fewest}",
                file=sys.stderr)
            return 2
        with holding_outputs(("--output", args.output)):  # BadInput (exit 2) where another command holds it
            if args.kind == "trainer":
                result = run_trainer_probe(trainer, args.output)
            else:
                result = _run_correctness(args, devices, trainer)
    except (TrainingError, RuntimeError, ValueError) as exc:
        say(f"sacscale probe: error: {exc}", file=sys.stderr)
        return 1
    _print(result, args.output)
    return 0 if json.loads(Path(args.output).read_text(encoding="utf-8"))["pass"] else 1
