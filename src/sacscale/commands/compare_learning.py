"""`sacscale compare-learning`: learning curves (return, length, tracking) of several runs against env steps."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sacscale.analysis.events import EventFileError
from sacscale.analysis.learning import at_env_steps, compare_learning, single_run_groups
from sacscale.atomic import json_text
from sacscale.commands._outputs_together import write_together
from sacscale.commands import BadInput
from sacscale.commands._output_lock import holding_outputs
from sacscale.commands._live_run import live_trainer_problem
from sacscale.commands._inputs import float_in, png_path, refuse_one_file, refuse_output_inside, same_file
from sacscale.eval.evaluate_checks import foreign_link_problem
from sacscale.pipeline.config_check import ConfigError, check_string
from sacscale.usage import say


MAX_HALF_WIDTH = 1e12  # env steps: past any run's; 1e308 printed a 309-digit table header


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="LABEL=RUN_DIR", help="runs to compare, labelled")
    parser.add_argument("--tail-fraction", type=float, default=0.2, help="share of the last log points averaged")
    parser.add_argument("--at-env-steps", type=_env_steps_list, metavar="N[,N...]",
                        help="also set the runs side by side at these env-step counts (e.g. 1e6,2e6,5e6): "
                             "mean episode length and normalised tracking over the log points within "
                             "--half-width of each")
    parser.add_argument("--half-width", type=float_in(0, MAX_HALF_WIDTH, "env steps"), default=2.5e5,
                        help="env steps either side of each --at-env-steps point (default 2.5e5)")
    parser.add_argument("--output", help="write curves and means as JSON here")
    parser.add_argument("--figure", type=png_path, help="write the plot (PNG) here")


def _env_steps_list(text: str) -> list[float]:
    try:
        points = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of env-step counts") from None
    if not points or any(not 0 < p < float("inf") for p in points):
        raise argparse.ArgumentTypeError(f"{text!r}: give one or more positive, finite env-step counts")
    return points


def _point_past_every_run(result: dict, points: list[float], half_width: float) -> str | None:
    """Why an --at-env-steps point compares nothing: its window starts past the last env
    step of every run (1e308 printed a 309-digit row of NaN); None when each is reached."""
    label, reached = max(((label, r["env_steps"]) for label, r in result["runs"].items()), key=lambda x: x[1])
    for point in points:
        if point - half_width > reached:
            return (f"--at-env-steps {point:g}: past every run (+-{half_width:g} around it; the furthest, "
                    f"{label}, reaches {reached:,.0f} env steps)")
    return None


def _labelled_runs(args: argparse.Namespace) -> dict[str, str]:
    """`{label: run dir}` of the LABEL=RUN_DIR arguments; BadInput names a bad one."""
    runs: dict[str, str] = {}
    for item in args.runs:
        label, sep, path = item.partition("=")
        if not sep or not label or not path:
            raise BadInput(f"{item!r} is not LABEL=RUN_DIR")
        try:  # a label goes into the JSON and the figure as it is: no escapes or reordering there
            check_string(label, "label")
        except ConfigError as exc:
            raise BadInput(str(exc)) from None
        if label in runs:  # the later run would replace the earlier one without a word
            raise BadInput(f"label {label!r} is given twice")
        twice = [other for other, seen in runs.items() if same_file(seen, path)]
        if twice:  # a run compared with itself under two labels looks like two runs that agree
            raise BadInput(f"{label}={path}: the run of {twice[0]!r} given again")
        runs[label] = path
        refuse_output_inside("--output", args.output, path)
        refuse_output_inside("--figure", args.figure, path)
    return runs


def _refuse_missing(runs: dict[str, str]) -> None:
    """BadInput naming a run directory that is not there (the event reader would name its tb/),
    one reached through another user's symbolic link (exit 2, as render and evaluate refuse
    it), or one a trainer is training in now (its curves are not yet the run's)."""
    for label, path in runs.items():
        if foreign := foreign_link_problem(path):
            raise BadInput(f"{path}: {foreign}")
        if not os.path.isdir(path):
            raise BadInput(f"{label}={path}: " + ("not a directory" if os.path.lexists(path)
                                                  else "no such run directory"))
        if live := live_trainer_problem(path, "its curves", "compare"):
            raise BadInput(f"{label}={path}: {live}")


def run(args: argparse.Namespace) -> int:
    refuse_one_file(("--output", args.output), ("--figure", args.figure))  # the figure replaced the JSON
    runs = _labelled_runs(args)
    if not 0 < args.tail_fraction <= 1:  # also NaN
        say(f"sacscale compare-learning: error: --tail-fraction {args.tail_fraction!r}: must be in (0, 1]",
            file=sys.stderr)
        return 2
    _refuse_missing(runs)
    try:
        result = compare_learning(runs, args.tail_fraction)
    except EventFileError as exc:
        say(f"sacscale compare-learning: error: {exc}", file=sys.stderr)
        return 1
    if not args.half_width > 0:  # refused with points or without, as the options are
        say("sacscale compare-learning: error: --half-width must be positive", file=sys.stderr)
        return 2
    if args.at_env_steps:
        problem = _point_past_every_run(result, args.at_env_steps, args.half_width)
        if problem:
            say(f"sacscale compare-learning: error: {problem}", file=sys.stderr)
            return 2
    for label, r in result["runs"].items():
        if not r["curves"]["return"]["value"]:
            print(f"{label:>16}: {r['env_steps']:>10,.0f} env steps | no episode ended by its last log point, "
                  "so no return or length to compare")
            continue
        print(f"{label:>16}: {r['env_steps']:>10,.0f} env steps | return {r['first_return']:7.2f} -> "
            f"{r['tail_mean_return']:7.2f} | length {r['first_length']:6.1f} -> {r['tail_mean_length']:6.1f} | "
            f"lin-vel tracking {r['first_tracking_lin_vel']:.4f} -> {r['tail_mean_tracking_lin_vel']:.4f} "
            f"(last {args.tail_fraction:.0%} of log points) | normalised tracking lin "
            f"{r['normalised_tracking_lin_vel']:.2f} yaw {r['normalised_tracking_ang_vel']:.2f} "
            f"(last {result['quality_fraction']:.0%}; "
            f"standing still: {r['stand_still_normalised_tracking_lin_vel']:.2f} / "
            f"{r['stand_still_normalised_tracking_ang_vel']:.2f})")
    if args.at_env_steps:
        result["at_env_steps"] = at_env_steps(result, args.at_env_steps, args.half_width)
        labels = list(result["runs"])
        print(f"at equal env steps (means over the log points within +-{args.half_width:,.0f}; tracking / its "
            f"maximum): episode length | lin | yaw, for {' / '.join(labels)}")
        for row in result["at_env_steps"]:
            cells = [" / ".join(f"{row['runs'][label][name]:.{0 if name == 'length' else 2}f}" for label in labels)
                     for name in ("length", "tracking_lin_vel", "tracking_ang_vel")]
            print(f"{row['env_steps']:>14,.0f} | " + " | ".join(cells))
    figure = _figure(result, args.figure) if args.figure else None  # drawn before anything is written
    with holding_outputs(("--output", args.output), ("--figure", args.figure)):  # the curves and their plot
        for given in (args.output, args.figure):
            if given:
                Path(given).parent.mkdir(parents=True, exist_ok=True)
        # both new or neither: a figure that could not be written left the JSON beside an older one
        write_together((args.output, json_text(result).encode()), (args.figure, figure))
    return 0


def _figure(result: dict, path: str) -> bytes:
    """The report's learning figure, one group per run, as PNG bytes; matplotlib is imported
    only when a figure is asked for."""
    from sacscale.report.plots import figure_png, learning_curves_figure

    groups = single_run_groups({label: r["curves"] for label, r in result["runs"].items()})
    fig, _ = learning_curves_figure(groups, baselines=result["stand_still"])
    return figure_png(fig, Path(path).name)
