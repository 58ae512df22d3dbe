"""`sacscale solver-study`: per-step cost and trajectory deviation of solver settings."""

from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from sacscale.atomic import write_json
from sacscale.checks import seed_arg
from sacscale.commands import BadInput
from sacscale.commands._output_lock import holding_outputs
from sacscale.commands._inputs import model_problem
from sacscale.sim import solver_settings
from sacscale.sim.step_limits import DEFAULT_CHECKPOINTS, MAX_ENVS, MAX_ROLLOUT_ENV_STEPS, MAX_THREADS
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--num-envs", type=int, default=256, help="simulations per batch (default 256)")
    parser.add_argument("--steps", type=int, default=100,
                        help="control steps per rollout and per cost run (default 100)")
    parser.add_argument("--threads", type=int, default=1, help="threads of each batch (default 1)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="rounds of cost measurement, alternating order (default 1)")
    parser.add_argument(
        "--stand-window", type=int, default=25,
        help="the standing cost cycles over the reference's first N states, while the robots stand (default 25)",
    )
    parser.add_argument(
        "--setting", action="append", default=None, metavar="SPEC",
        help='a setting to compare, e.g. "iterations=5,ls_iterations=8" (keys: iterations, ls_iterations, '
        "tolerance, init_perturbation); repeatable; replaces the default sweep. MuJoCo's defaults always run first, "
        "as the reference",
    )
    parser.add_argument("--checkpoints", default=None,
                        help="control steps at which trajectories are compared, each within --steps (default: those "
                        "of 10,50,100 within --steps, or the last step if none is)")
    parser.add_argument("--model", default=None, help="compiled model (.mjb); default: build from the asset package")
    parser.add_argument("--seed", type=seed_arg, default=0,
                        help="random seed of the initial states and random actions (default 0)")
    parser.add_argument("--output", default=None, help="write the results as JSON to this file")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _fmt_err(x: float, unit: str) -> str:
    return "0" if x == 0 else f"{x:.2g}{unit}"


def print_tables(result: dict, file=None) -> None:
    file = file or sys.stdout
    rows = result["results"]
    w = max(len(r["setting"]["name"]) for r in rows)
    p = lambda *a: print(*a, file=file)  # noqa: E731
    p(
        f"{result['num_envs']} envs, {result['steps']} control steps x {result['substeps']} substeps, "
        f"{result['threads']} thread(s), {result['repeats']} cost round(s), {result['processor']}"
    )
    p(
        "\nCost on identical states (each setting steps from the reference's states): env steps per CPU-second, "
        "speed-up against the reference (min-max over rounds), mean solver iterations of the last substep.\n"
        f"stand: the reference's first {result['stand_window']} standing states, cycled; random: its random-action "
        "rollout. free: the setting's own free-running random-action rollout."
    )
    p(
        f"{'setting':<{w}}  {'stand/cpu-s':>11} {'x ref':>13} {'iters':>5}   {'random/cpu-s':>12} {'x ref':>13}"
        f" {'iters':>5}   {'free x ref':>10} {'unstable':>8}"
    )
    for r in rows:
        cs, cr = r["cost"]["stand"], r["cost"]["random"]
        fr = r["free_running"]["random"]
        unstable = r["free_running"]["stand"]["unstable_envs"] + fr["unstable_envs"]

        def speed(c):
            if c["cpu_speedup_vs_reference"] is None:
                return "unstable"
            if result["repeats"] > 1:
                return f"{c['cpu_speedup_vs_reference']:.3f} ({c['cpu_speedup_min']:.2f}-{c['cpu_speedup_max']:.2f})"
            return f"{c['cpu_speedup_vs_reference']:.3f}"

        p(
            f"{r['setting']['name']:<{w}}  {cs['env_steps_per_cpu_s']:>11.0f} {speed(cs):>13} "
            f"{cs['mean_solver_iterations']:>5.2f}"
            f"   {cr['env_steps_per_cpu_s']:>12.0f} {speed(cr):>13} {cr['mean_solver_iterations']:>5.2f}"
            f"   {_fmt_speedup(fr['cpu_speedup_vs_reference']):>10} {unstable:>8d}"
        )
    ck = [str(c) for c in result["checkpoints"]]
    for sc in result["scenarios"]:
        p(
            f"\nTrajectory deviation from the reference, scenario {sc} (same initial states and controls), "
            f"after {'/'.join(ck)} control steps:\n"
            "joint RMS (rad), mean pelvis position error (m), fraction of envs whose fall status differs, "
            "fraction still bit-identical; |d fall step|: mean difference of the first fall step "
            "(envs that fell in both)"
        )
        p(
            f"{'setting':<{w}}  {'joint RMS':>22}  {'pelvis err':>22}  {'fall differs':>16}  {'identical':>16}"
            f"  {'|d fall step|':>13}"
        )
        for r in rows:
            d = r["deviation"][sc]
            if d[ck[0]] is None:
                p(f"{r['setting']['name']:<{w}}  every env went unstable: no deviation to give")
                continue
            jr = "/".join(_fmt_err(d[c]["joint_rms_rad"], "") for c in ck)
            pe = "/".join(_fmt_err(d[c]["pelvis_err_mean_m"], "") for c in ck)
            fd = "/".join(f"{d[c]['fall_differs_frac']:.2f}" for c in ck)
            idn = "/".join(f"{d[c]['identical_frac']:.2f}" for c in ck)
            ft = r["fall_timing"][sc]["fall_step_mean_abs_diff"]
            compared = d[ck[0]]["envs_compared"]
            some = "" if compared == result["num_envs"] else f"  ({compared} stable envs)"
            p(f"{r['setting']['name']:<{w}}  {jr:>22}  {pe:>22}  {fd:>16}  {idn:>16}  {ft:>13.2f}{some}")


def _fmt_speedup(x: float | None) -> str:
    return "unstable" if x is None else f"{x:.3f}"


def unstable_lines(result: dict) -> list[str]:
    """One line for each setting whose simulations MuJoCo found unstable and reset (its own
    warning goes nowhere: the study silences MuJoCo's log file)."""
    n, steps, rounds = result["num_envs"], result["steps"], result["repeats"]
    lines = []
    for r in result["results"]:
        if not r["unstable"]:
            continue
        scs = result["scenarios"]
        free = sum(r["free_running"][sc]["unstable_envs"] for sc in scs)
        replayed = sum(r["cost"][sc]["unstable_sim_steps"] for sc in scs)
        none_stable = any(r["deviation"][sc][str(result["checkpoints"][0])] is None for sc in scs)
        speedups = "its speed-ups are" if replayed else "its free-running speed-up is"
        deviations = ("no deviation where no env stayed stable" if none_stable
                      else "deviations over the envs that stayed stable only")
        lines.append(
            f"solver-study: setting {r['setting']['name']!r} went unstable (NaN, Inf or huge values; MuJoCo reset "
            f"the state) in {free} of {n * len(scs)} free-running simulations and {replayed} of "
            f"{n * steps * rounds * len(scs)} replayed steps: {speedups} left out (null), {deviations}"
        )
    return lines


def _checkpoints(text: str | None, steps: int) -> list[int]:
    """--checkpoints as control-step counts. Given, each must be a step of the rollout: one
    past it was moved to the last step unseen, and the record named a step not asked for."""
    if text is None:
        return list(DEFAULT_CHECKPOINTS)  # those within --steps are kept (solver_study.checkpoints_for)
    words = [c.strip() for c in str(text).split(",") if c.strip()]
    if not words or not all(w.isascii() and w.isdigit() and int(w) >= 1 for w in words):
        raise ValueError(f"--checkpoints {text!r}: positive control-step counts, e.g. 10,50,100")
    counts = [int(w) for w in words]
    if len(set(counts)) != len(counts):
        raise ValueError(f"--checkpoints {text!r}: a step is given twice")
    if max(counts) > steps:
        raise ValueError(f"--checkpoints {text!r}: step {max(counts)} is past the rollout (--steps {steps})")
    return counts


def run(args: argparse.Namespace) -> int:
    try:
        if min(args.num_envs, args.steps, args.threads, args.repeats, args.stand_window) < 1:
            raise ValueError("--num-envs, --steps, --threads, --repeats and --stand-window must be >= 1")
        if args.num_envs > MAX_ENVS:  # MuJoCo's batch takes a C int; memory runs out long before
            raise ValueError(f"--num-envs must be at most {MAX_ENVS}, got {args.num_envs}")
        if args.num_envs * args.steps > MAX_ROLLOUT_ENV_STEPS:
            raise ValueError(f"--num-envs {args.num_envs} x --steps {args.steps} = {args.num_envs * args.steps:,} "
                             f"env steps a rollout, past {MAX_ROLLOUT_ENV_STEPS:,} (its controls and replayed "
                             "states are held in memory whole): give fewer envs or steps")
        if args.threads > MAX_THREADS:
            raise ValueError(f"--threads must be at most {MAX_THREADS} (a thread per CPU; the kernel's most), "
                             f"got {args.threads}")
        checkpoints = _checkpoints(args.checkpoints, args.steps)
        if args.setting:
            settings = [solver_settings.REFERENCE] + [solver_settings.parse_setting(spec) for spec in args.setting]
        else:
            settings = solver_settings.default_sweep()
        names = [s.name for s in settings]
        if len(set(names)) != len(names):
            raise ValueError(f"a setting is given twice: {names}")
    except ValueError as e:
        say(f"solver-study: {e}", file=sys.stderr)
        return 2
    problem = model_problem(args.model)  # a file that is not the task's model: named, before the measurement
    if problem:
        raise BadInput(problem)
    # MuJoCo loads here, after the option checks: a refusal answers without it
    from sacscale.sim import solver_study as ss
    from sacscale.task.g1_model import load_model

    model = load_model(args.model)

    with holding_outputs(("--output", args.output)):  # nor written into another command's live folder
        total = ss.study_steps(len(settings), args.steps, args.repeats)
        with tqdm(total=total, unit="step", disable=args.no_progress, desc="solver-study") as bar:
            result = ss.run_solver_study(
                model, settings, num_envs=args.num_envs, steps=args.steps, num_threads=args.threads, seed=args.seed,
                checkpoints=checkpoints, stand_window=args.stand_window, repeats=args.repeats, progress=bar.update,
            )
        result["model_path"] = args.model
        asked = sys.argv[1:2] == ["solver-study"]
        result["command"] = "sacscale solver-study " + " ".join(sys.argv[2:]) if asked else None
        print_tables(result)
        for line in unstable_lines(result):
            say(line, file=sys.stderr)
        if args.output:
            write_json(args.output, result)  # atomic: never written through a link, never half a file
    return 0
