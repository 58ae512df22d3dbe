"""`sacscale compare-learning`: learning curves (return, length, tracking) of several runs against env steps."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="LABEL=RUN_DIR", help="runs to compare, labelled")
    parser.add_argument("--tail-fraction", type=float, default=0.2, help="share of the last log points averaged")
    parser.add_argument("--output", help="write curves and means as JSON here")
    parser.add_argument("--figure", help="write the plot (PNG) here")


def run(args: argparse.Namespace) -> int:
    from sacscale.analysis.events import EventFileError
    from sacscale.analysis.learning import compare_learning, single_run_groups

    runs = {}
    for item in args.runs:
        label, sep, path = item.partition("=")
        if not sep or not label or not path:
            print(f"sacscale compare-learning: error: {item!r} is not LABEL=RUN_DIR", file=sys.stderr)
            return 2
        runs[label] = path
    try:
        result = compare_learning(runs, args.tail_fraction)
    except EventFileError as exc:
        print(f"sacscale compare-learning: error: {exc}", file=sys.stderr)
        return 1
    for label, r in result["runs"].items():
        print(f"{label:>16}: {r['env_steps']:>10,.0f} env steps | return {r['first_return']:7.2f} -> "
              f"{r['tail_mean_return']:7.2f} | length {r['first_length']:6.1f} -> {r['tail_mean_length']:6.1f} | "
              f"lin-vel tracking {r['first_tracking_lin_vel']:.4f} -> {r['tail_mean_tracking_lin_vel']:.4f} "
              f"(last {args.tail_fraction:.0%} of log points) | normalised tracking lin "
              f"{r['normalised_tracking_lin_vel']:.2f} yaw {r['normalised_tracking_ang_vel']:.2f} "
              f"(last {result['quality_fraction']:.0%}; standing still: {r['stand_still_normalised_tracking_lin_vel']:.2f} / "
              f"{r['stand_still_normalised_tracking_ang_vel']:.2f})")
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(result, indent=2))
    if args.figure:
        from sacscale.report.plots import learning_curves  # the report's figure, one group per run

        groups = single_run_groups({label: r["curves"] for label, r in result["runs"].items()})
        learning_curves(groups, Path(args.figure), baselines=result["stand_still"])
    return 0
