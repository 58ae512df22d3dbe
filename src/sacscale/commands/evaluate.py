"""`sacscale evaluate CHECKPOINT_OR_RUN --output eval.json`: velocity-tracking errors of a trained
policy on a fixed command grid, against a robot that stands still."""

from __future__ import annotations

import argparse
import os
import sys

from sacscale.checks import seed_arg
from sacscale.atomic import json_text
from sacscale.commands._output_lock import holding_outputs
from sacscale.commands._outputs_together import write_together
from sacscale.commands._live_run import live_trainer_problem, run_folder_of
from sacscale.commands._inputs import (
    float_in,
    model_problem,
    png_path,
    refuse_one_file,
    refuse_output_inside,
    refuse_output_on_input,
)
from sacscale.eval import protocol
from sacscale.eval.limits import CONTROL_DT, EPISODE_S, SETTLE_S
from sacscale.eval.evaluate_checks import CheckpointError, batch_problem, refuse_foreign_checkpoint, resolve_checkpoint
from sacscale.sim.step_limits import threads_problem
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", metavar="CHECKPOINT_OR_RUN",
                        help="checkpoint (.pt) or run directory (uses RUN/checkpoints/final.pt)")
    parser.add_argument("--output", required=True, help="JSON file to write (atomically)")
    parser.add_argument("--figure", default=None, type=png_path,
                        help="also write commanded vs achieved velocities (PNG) here")
    parser.add_argument("--envs-per-command", type=int, default=8, help="envs (episodes) per grid command (default 8)")
    # at least one control step: 0 passed this bound and was refused again as no control steps
    parser.add_argument("--seconds", type=float_in(CONTROL_DT, EPISODE_S, "one episode"), default=EPISODE_S,
                        help=f"episode length evaluated, at most {EPISODE_S:g} (default {EPISODE_S:g})")
    parser.add_argument("--settle-s", type=float_in(0, EPISODE_S, "within one episode"), default=SETTLE_S,
                        help=f"initial seconds not scored (default {SETTLE_S:g})")
    parser.add_argument("--model", default=None,
                        help="compiled G1 model (.mjb); default: build it from the asset package")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="simulation threads (default: the CPUs this process may use)")
    parser.add_argument("--seed", type=seed_arg, default=protocol.SEED,
                        help="seed of the resets (position, heading, gait phase)")
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("--stochastic", action="store_const", const=1.0, dest="noise_scale",
                       default=protocol.NOISE_SCALE,
                       help="diagnostic: sample the actions as in training instead of tanh(mean)")
    noise.add_argument("--noise-scale", type=float, dest="noise_scale", metavar="S",
                       help="diagnostic: sample the actions with S x the policy's std "
                            "(0: tanh(mean), the protocol; 1: as --stochastic)")


def run(args: argparse.Namespace) -> int:
    try:  # before anything in it is read: never through another user's link
        refuse_foreign_checkpoint(args.checkpoint)
    except CheckpointError as exc:
        say(f"sacscale evaluate: error: {exc}", file=sys.stderr)
        return 2
    refuse_one_file(("--output", args.output), ("--figure", args.figure))  # before the evaluation's minutes
    refuse_output_on_input([("--output", args.output), ("--figure", args.figure)],
                           [("checkpoint", args.checkpoint), ("--model", args.model)])
    run_folder = run_folder_of(args.checkpoint)
    if run_folder is not None:  # `evaluate R --output R/run.json` replaced the run's record
        refuse_output_inside("--output", args.output, run_folder)
        refuse_output_inside("--figure", args.figure, run_folder)
        live = live_trainer_problem(run_folder, "its checkpoint", "evaluate")
        if live:  # its final.pt is the one of the last checkpoint, not the run's end
            say(f"sacscale evaluate: error: {run_folder}: {live}", file=sys.stderr)
            return 2
    if problem := threads_problem(args.threads, len(os.sched_getaffinity(0))):
        say(f"sacscale evaluate: error: {problem}", file=sys.stderr)
        return 2
    problem = model_problem(args.model)  # a file that is not the task's model: named, before evaluating
    if problem:
        say(f"sacscale evaluate: error: {problem}", file=sys.stderr)
        return 2
    try:  # evaluate's own first checks, made before torch and MuJoCo load (it makes them again)
        if problem := batch_problem(args.envs_per_command, args.threads):
            raise ValueError(problem)
        resolve_checkpoint(args.checkpoint)
    except (CheckpointError, ValueError) as exc:
        say(f"sacscale evaluate: error: {exc}", file=sys.stderr)
        return 2
    # torch and MuJoCo load here, after the checks: a refusal answers without them
    from sacscale.eval.evaluate import evaluate, tracking_png

    with holding_outputs(("--output", args.output), ("--figure", args.figure)):  # the record and its figure: one run's
        try:
            result = evaluate(args.checkpoint, args.model, envs_per_command=args.envs_per_command,
                              seconds=args.seconds, settle_s=args.settle_s, threads=args.threads, seed=args.seed,
                              noise_scale=args.noise_scale)
        except (CheckpointError, ValueError) as exc:
            say(f"sacscale evaluate: error: {exc}", file=sys.stderr)
            return 2
        # the figure drawn before either is written: a full disk or a failed plot leaves neither new
        figure = tracking_png(result) if args.figure else b""
        write_together((args.output, json_text(result).encode()), (args.figure, figure))

    o, b, r = result["overall"], result["baseline_stand_still"]["overall"], result["ratio_to_stand_still"]
    p = result["protocol"]
    say(f"{result['checkpoint']} (iteration {result['iteration']}, {result['env_steps']} env steps): "
        f"{len(p['commands'])} commands x {p['envs_per_command']} envs, {p['seconds']:g} s, "
        f"scored after {p['settle_s']:g} s")
    print(f"{'':>14} {'lin_vel_xy m/s':>15} {'yaw_rate rad/s':>15}")
    for label, e in (("policy rms", o), ("stand-still", b)):
        print(f"{label:>14} {_fmt(e['rms_error']['lin_vel_xy']):>15} {_fmt(e['rms_error']['yaw_rate']):>15}")
    print(f"{'ratio':>14} {_fmt(r['lin_vel_xy']):>15} {_fmt(r['yaw_rate']):>15}")
    t = o["normalised_tracking"]
    print(f"{'tracking':>14} {_fmt(t['lin_vel_xy']):>15} {_fmt(t['yaw_rate']):>15}   (the task's kernels, 1 = perfect; "
          f"actions {p['actions'].split(':')[0]})")
    print(f"policy std (before tanh, mean over samples and actions): {_fmt(result['action_std_mean'])}")
    say(f"falls: {o['fall_rate']:.3f} per episode ({o['episodes']} episodes); "
        f"wall {result['timing']['wall_s']:.1f} s; wrote {args.output}" + (f", {args.figure}" if args.figure else ""))
    if p["checkpoint_model_sha256"] and p["checkpoint_model_sha256"] != p["model_sha256"]:
        say(f"sacscale evaluate: warning: the model ({p['model_sha256'][:12]}) is not the one the checkpoint "
            f"was trained on ({p['checkpoint_model_sha256'][:12]})", file=sys.stderr)
    return 0


def _fmt(v) -> str:
    return "n/a" if v is None or v != v else f"{v:.4f}"
