"""`sacscale probe correctness`: data-parallel gradient sync against a single-process reference."""

from __future__ import annotations

import argparse
import sys

from sacscale.train import TrainConfig, TrainingError, check_devices


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=["correctness"], help="which probe")
    parser.add_argument("--devices", default="auto",
                        help="'cpu,cpu' (2 gloo ranks), '0' (1 GPU: all-reduce captured in the graph, "
                             "world size 1), '0,1' (2 GPUs); auto: 2 GPUs if visible, else 1, else cpu,cpu")
    parser.add_argument("--compile-loss", action="store_true", help="torch.compile the losses (CUDA)")
    parser.add_argument("--iterations", type=int, default=3, help="full learner iterations to compare")
    parser.add_argument("--batch-size", type=int, default=0, help="batch per rank (0: 64 on CPU, 8192 on CUDA)")
    parser.add_argument("--amp-dtype", choices=["float32", "bfloat16"], default="float32",
                        help="autocast of both sides (float32 isolates the sync math from bf16 rounding)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout-s", type=float, default=600.0, help="longest wait on a peer rank")
    parser.add_argument("--output", required=True, help="JSON file to write")


def _auto_devices() -> str:
    import torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return "0,1" if n >= 2 else "0" if n == 1 else "cpu,cpu"


def run(args: argparse.Namespace) -> int:
    from sacscale.dist.probe import ProbeSettings, run_probe

    if args.iterations < 1:
        print("sacscale probe: error: --iterations must be positive", file=sys.stderr)
        return 2
    try:
        devices = TrainConfig(devices=_auto_devices() if args.devices == "auto" else args.devices).device_list()
        check_devices(devices)
        result = run_probe(ProbeSettings(devices, args.iterations, args.compile_loss, args.batch_size,
                                         seed=args.seed, amp_dtype=args.amp_dtype),
                           args.output, args.timeout_s)
    except (TrainingError, RuntimeError, ValueError) as exc:
        print(f"sacscale probe: error: {exc}", file=sys.stderr)
        return 1
    judged = [c for c in result["comparisons"] if c["tolerance"] is not None]
    worst = max(judged, key=lambda c: c["max_rel_diff"] / c["tolerance"])
    print(f"probe correctness: {'PASS' if result['pass'] else 'FAIL'} | world size {result['world_size']} "
          f"({result['backend']}), all-reduce in CUDA graph: {result['allreduce_in_cuda_graph']}, "
          f"{result['autocast_dtype']}; worst {worst['tensor']}: rel {worst['max_rel_diff']:.2e} "
          f"(tolerance {worst['tolerance']:.0e}) -> {args.output}")
    return 0 if result["pass"] else 1
