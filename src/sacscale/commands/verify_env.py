"""`sacscale verify-env --output FILE.json [--plan plan.json]`: record the environment, check the plan fits.

Records the project's git commit and dirty state; Python, torch, CUDA, cuDNN, NCCL,
MuJoCo and Snakemake versions; GPU names, count, memory and driver; `nvidia-smi topo -m`
where present; the CPU model and `lscpu -e=CPU,CORE,SOCKET,NODE`; NCCL_* and
CUDA_VISIBLE_DEVICES; which learner module Python actually imports and whether its
learner class has `set_gradient_graph_hooks` (`graph_hooks: true`).

With --diff-output, the code of a dirty tree is stored so that it can be rebuilt:
`git diff HEAD --binary` of the tracked files plus a new-file patch of every untracked,
not ignored file, outside the pipeline's output directories (results/, reports/, logs/,
benchmarks/: evidence, not code). `git checkout COMMIT && git apply --binary FILE`
rebuilds the tree; the file's SHA-256 goes into the record and the file into the
manifest. A clean tree gives an empty file.

With a plan (the pipeline's resolved preset: results/<run set>/plan.json)
it fails, naming what is missing, when the plan needs more GPUs than are visible or a
CPU pool names CPUs this process cannot use. The JSON is written either way.
A recorded value that verify refuses (a variable's setting, a version or the lscpu table not of its form) stops it
before anything is written (exit 2): the set could never verify.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sacscale.atomic import write_json
from sacscale.commands._output_lock import holding_outputs
from sacscale.commands._inputs import BadInput, read_json, refuse_one_file, refuse_output_on_input
from sacscale.eval.gl_backend import render_status
from sacscale.evidence.environment_text import recorded_value_problems
from sacscale.git_command import GitFailed
from sacscale.pipeline.environment import (COMMAND_MODULES, HOOKS, LEARNER_CLASS, LEARNER_MODULE, check_plan, collect,
                                           plan_problem, write_source_diff)
from sacscale.pipeline.recordable_checkout import CheckoutRefused, CheckoutUnreadable
from sacscale.pipeline.stale_bytecode import bytecode_problems
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", required=True, help="JSON file to write")
    parser.add_argument("--plan", help="the resolved run plan (plan.json) whose needs to check")
    parser.add_argument("--require-graph-hooks", action="store_true",
                        help=f"fail unless {LEARNER_MODULE}.{LEARNER_CLASS} has {HOOKS}")
    parser.add_argument("--require-commands", default="",
                        help="comma list of sacscale commands that must be importable (e.g. train,probe,prepare-model)")
    parser.add_argument("--require-render", action="store_true",
                        help="fail unless the report's video can be made here (the G1's visual meshes and a "
                        "headless OpenGL context)")
    parser.add_argument("--diff-output", help="write the project's uncommitted changes here (a binary-safe patch "
                        "against its commit, untracked source files included; empty when clean)")



def _plan(path: str) -> dict:
    """The plan to check, of the shape check_plan reads (BadInput naming the file and key)."""
    plan = read_json(path, "plan")
    problem = plan_problem(plan)
    if problem:
        raise BadInput(f"plan {path}: not a resolved run plan (plan.json): {problem}")
    return plan


def run(args: argparse.Namespace) -> int:
    try:
        return _verify_env(args)
    except CheckoutUnreadable as exc:  # what the file system refuses: exit 1, as for other commands
        say(f"sacscale verify-env: error: --diff-output: the code cannot be recorded: {exc.strerror}", file=sys.stderr)
        return 1
    except GitFailed as exc:  # git's own refusal to read the checkout (a corrupt index): its reason
        say(f"sacscale verify-env: error: the code cannot be recorded: {exc}", file=sys.stderr)
        return 1


def _collect() -> dict:
    """The environment record; BadInput where the checkout git finds will not be read."""
    try:
        return collect()
    except CheckoutRefused as exc:
        raise BadInput(f"the code cannot be recorded: {exc}") from None


def _refuse_unverifiable(env: dict) -> None:
    """BadInput, before anything is written, where the record holds a value verify refuses (by
    verify's own rule): the set's verify would fail on it after all the training."""
    problems = recorded_value_problems(env)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise BadInput(f"environment.json: {problems[0]}{more}: verify refuses it, so the set would fail after all its "
                       "training (a variable: set it as NCCL documents, or unset it, where snakemake runs)")


def _write_diff(env: dict, path: str) -> None:
    """The stored diff written and described in the record; BadInput where the checkout's code
    cannot be recorded by it, or where the code that runs is bytecode git records nothing of."""
    stale = bytecode_problems()
    if stale:
        more = f", and {len(stale) - 1} more" if len(stale) > 1 else ""
        raise BadInput(f"--diff-output: the code cannot be recorded: {stale[0]}, which this command may already have "
                       f"run (it imports the package before it can judge its bytecode){more}: remove "
                       f"{'them' if more else 'it'} (Python compiles the source again) and run again")
    try:
        env["project"]["diff"] = write_source_diff(env["project"], Path(path))
    except CheckoutRefused as exc:
        raise BadInput(f"--diff-output: the code cannot be recorded: {exc}") from None
    workdir = env.get("workdir", {}).get("git", {})
    if workdir.get("repository") and workdir.get("path") == env["project"].get("path"):
        workdir["dirty"] = env["project"]["dirty"]  # one checkout: one answer, the stored diff's


def _verify_env(args: argparse.Namespace) -> int:
    refuse_one_file(("--output", args.output), ("--diff-output", args.diff_output))
    refuse_output_on_input([("--output", args.output), ("--diff-output", args.diff_output)], [("--plan", args.plan)])
    plan = _plan(args.plan) if args.plan else None  # before anything is collected or written
    with holding_outputs(("--output", args.output), ("--diff-output", args.diff_output)):  # a record and its patch
        env = _collect()
        _refuse_unverifiable(env)
        if args.diff_output:
            _write_diff(env, args.diff_output)
        problems: list[str] = []
        if plan is not None:
            env["plan"] = plan
            problems += check_plan(plan, env)
        if args.require_graph_hooks and not env["learner"]["graph_hooks"]:
            why = env["learner"]["error"] or f"{LEARNER_CLASS} has no {HOOKS}"
            problems.append(f"learner: {LEARNER_MODULE} (from {env['learner']['file']}) lacks graph hooks: {why}")
        for name in [c for c in args.require_commands.split(",") if c]:
            if not env["commands"].get(name, False):
                problems.append(f"commands: `sacscale {name}` is not available (sacscale.commands."
                                f"{COMMAND_MODULES.get(name, name)} cannot be found)")
        if args.require_render:
            ok, why = render_status()
            env["render"] = {"ok": ok, "backend" if ok else "error": why}
            if not ok:
                problems.append(f"video: the report's video (config video.enabled) cannot be made here: {why}; "
                                "or run without it: video: {enabled: false}")
        env["problems"] = problems
        env["ok"] = not problems
        write_json(args.output, env)
    gpus = ", ".join(g["name"] for g in env["torch"]["gpus"]) or "none"
    print(f"torch {env['versions']['torch']}, CUDA devices: {env['torch']['cuda_devices']} ({gpus}); "
          f"CPUs available: {env['cpu']['available']}; learner graph hooks: {env['learner']['graph_hooks']}")
    if args.plan:
        print(f"preset {env['plan']['preset']}: {env['plan']['preset_reason']}")
    if problems:
        print("sacscale verify-env: this machine cannot run the plan:", file=sys.stderr)
        for p in problems:
            say(f"  {p}", file=sys.stderr)
        return 1
    return 0
