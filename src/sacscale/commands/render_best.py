"""`sacscale render-best --evaluations EVAL.json ... --runs-dir DIR --output best.webp
--record best.json`: the video of the best-evaluated run's policy (sacscale.eval.best
says how it is chosen), and a record of the choice, for the report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sacscale.atomic import write_json
from sacscale.commands import render as render_command
from sacscale.commands._output_lock import holding_outputs
from sacscale.commands._inputs import (
    BadInput,
    read_evaluations,
    refuse_output_beside,
    refuse_output_in_run_sets,
    refuse_output_inside,
    refuse_output_on_input,
    same_file,
)
from sacscale.eval.best import best_run
from sacscale.eval.evaluate_checks import CheckpointError, foreign_link_problem, input_sha256, resolve_checkpoint
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--evaluations", nargs="+", required=True, metavar="EVAL_JSON",
                        help="sacscale evaluate outputs named <run>.json, in run order")
    parser.add_argument("--runs-dir", required=True, help="where the runs are (DIR/<run>/checkpoints/final.pt)")
    parser.add_argument("--record", required=True, help="JSON of the choice (run, score, the rule, every score)")
    render_command.add_video_arguments(parser)


def _refuse_one_file(args: argparse.Namespace) -> None:
    """Checked before rendering: the record written after the video replaced it (and the
    command still said it wrote the video), an output on an input replaces the input, and
    one among the files read (`--record RUNS/<run>/train_meta.json` replaced a run's
    record) is refused as `analyze-run` refuses it."""
    for index, path in enumerate(args.evaluations):  # one run's evaluation twice: its score counted twice
        if twice := next((other for other in args.evaluations[:index] if same_file(other, path)), None):
            raise BadInput(f"evaluation {path}: given twice (also {twice})")
    if same_file(args.output, args.record):
        raise BadInput(f"--output and --record are one file ({args.output}): the record would replace the video")
    outputs = [("--output", args.output), ("--record", args.record)]
    refuse_output_on_input(outputs, [("evaluation", args.evaluations), ("--model", args.model)])
    for option, output in outputs:
        refuse_output_inside(option, output, args.runs_dir)
        refuse_output_beside(option, output, args.evaluations, "evaluation")
    refuse_output_in_run_sets(outputs, [args.evaluations, args.runs_dir, args.model])


def run(args: argparse.Namespace) -> int:
    args.program = "sacscale render-best"  # the render it runs speaks in this command's name
    if problem := foreign_link_problem(args.runs_dir):  # the run chosen is judged again, by the render
        raise BadInput(f"--runs-dir {args.runs_dir}: {problem}")
    _refuse_one_file(args)
    if not Path(args.runs_dir).is_dir():
        raise BadInput(f"--runs-dir {args.runs_dir}: not a folder (it holds the runs, <run>/checkpoints/final.pt)")
    try:
        choice = best_run(read_evaluations(args.evaluations))
    except BadInput:
        raise  # names the file: one line, exit 2 (sacscale.cli)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        say(f"sacscale render-best: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    args.checkpoint = str(Path(args.runs_dir) / choice["run"])
    try:  # the policy the video shows, for verify to hold against the run's evaluation
        rendered = input_sha256(resolve_checkpoint(args.checkpoint))
    except CheckpointError:
        rendered = None  # no checkpoint: the render names it, and no record is written
    say(f"best run: {choice['run']} (score {choice['score']:.3f}: {choice['rule']})")
    with holding_outputs(("--output", args.output), ("--record", args.record)):  # the video and its choice's record
        code = render_command.run(args, output_held=True)
        if code == 0:
            write_json(args.record, choice | {"video": Path(args.output).name, "seconds": args.seconds,
                                              "commands": args.commands, "width": args.width, "height": args.height,
                                              "fps": args.fps, "checkpoint_sha256": rendered})
    return code
