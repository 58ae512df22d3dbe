"""`sacscale analyze-run RUN_DIR --output FILE.json`: a run's figures from its event files."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sacscale.analysis.events import EventFileError, RankFolderNameError
from sacscale.analysis.metrics import MetricError, analyze_run
from sacscale.atomic import write_json
from sacscale.commands._inputs import refuse_output_inside
from sacscale.commands._live_run import live_trainer_problem
from sacscale.commands._output_lock import holding_outputs
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="run directory (holds tb/rank*/events.out.tfevents.*, run.json)")
    parser.add_argument("--output", required=True, help="JSON file to write (atomically)")


def run(args: argparse.Namespace) -> int:
    if not Path(args.run_dir).is_dir():  # exit 1 like any run it cannot analyse (tests/analysis)
        what = "missing" if not os.path.lexists(args.run_dir) else "not a directory"
        say(f"sacscale analyze-run: error: {args.run_dir}: not a run directory ({what})", file=sys.stderr)
        return 1
    refuse_output_inside("--output", args.output, args.run_dir)
    live = live_trainer_problem(args.run_dir, "its figures", "analyse")
    if live:
        say(f"sacscale analyze-run: error: {args.run_dir}: {live}", file=sys.stderr)
        return 2
    with holding_outputs(("--output", args.output)):  # nor written into another command's live folder
        try:
            result = analyze_run(args.run_dir)
        except RankFolderNameError as exc:  # the run's folders are laid out wrong: refused input
            say(f"sacscale analyze-run: error: {exc}", file=sys.stderr)
            return 2
        except (EventFileError, MetricError) as exc:
            say(f"sacscale analyze-run: error: {exc}", file=sys.stderr)
            return 1
        write_json(args.output, result)
    ranks = ", ".join(
        f"rank {r['rank']} {r['steady_env_steps_per_s']:,.1f}" for r in result["ranks"] if "steady_env_steps_per_s" in r
    )
    say(
        f"{result['run']}: steady {result['steady_env_steps_per_s']:,.1f} env steps/s over the last "
        f"{result['window']['window_events']} of {result['window']['events']} events"
        + (f" ({ranks})" if ranks else "")
    )
    return 0
