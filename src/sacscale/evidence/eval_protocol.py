"""An evaluation record's `protocol` against what ran it: the code's command grid, control
step, task settings, torch threads and words (sacscale.eval.protocol); its step counts from
its seconds; and, in a set the pipeline made, evaluate's defaults for the flags the evaluate
rule does not pass (--settle-s, --seed, --noise-scale: workflow/rules/evaluate.smk) and one
`seconds` and `envs_per_command` for all the set's evaluations (the rule passes every run the
same ones, the config's `evaluation` or its defaults, which no record holds). Fields an older
record lacks are not compared."""

from __future__ import annotations

from sacscale.number_kinds import is_number
from sacscale.eval import protocol as code
from sacscale.eval.limits import SETTLE_S, control_steps, seconds_problem, settle_steps
from sacscale.eval.pooling import actions_label
from sacscale.evidence.result import same_value
from sacscale.task.walk_rules import CONTROL_DT

# what the code fixes, by protocol field
_FIXED = {"control_dt": CONTROL_DT, "torch_threads": code.TORCH_THREADS, "velocity": code.VELOCITY,
          "falls": code.FALLS, **{k: list(v) if isinstance(v, tuple) else v for k, v in code.TASK_SETTINGS.items()}}
# evaluate's defaults for the flags the pipeline's evaluate rule leaves out
_PIPELINE_DEFAULTS = {"settle_s": (SETTLE_S, "--settle-s"), "seed": (code.SEED, "--seed"),
                      "noise_scale": (code.NOISE_SCALE, "--noise-scale")}
# far beyond any episode, and small enough to count in control steps (1e308 s overflows)
_LONGEST_S = 1e9
# what the rule passes every evaluation of a set alike
SHARED = ("seconds", "envs_per_command")


def _short(value) -> str:
    return repr(value)[:60]


def grid_problems(rel: str, protocol: dict) -> list[str]:
    """The commands are the code's grid: its names in its order, each with its velocities."""
    commands = protocol.get("commands")
    if commands is None:
        return []
    grid = code.grid_as_recorded()
    where = "the code's command grid (sacscale.eval.protocol.COMMAND_GRID)"
    if not isinstance(commands, dict) or list(commands) != list(grid):
        names = list(commands) if isinstance(commands, dict) else commands
        return [f"{rel}: protocol.commands names {_short(names)}, not the {len(grid)} commands of {where} in "
                f"its order"]
    return [f"{rel}: protocol.commands.{name} {_short(commands[name])}, {where} gives {grid[name]}"
            for name in grid if not same_value(commands[name], grid[name])]


def fixed_problems(rel: str, protocol: dict) -> list[str]:
    return [f"{rel}: protocol.{key} {_short(protocol[key])}, the code's is {_short(want)}"
            for key, want in _FIXED.items() if key in protocol and not same_value(protocol[key], want)]


def step_problems(rel: str, protocol: dict) -> list[str]:
    """steps and settle_steps from seconds and settle_s, as evaluate counts them."""
    seconds, settle_s = protocol.get("seconds"), protocol.get("settle_s")
    if not (is_number(seconds) and is_number(settle_s) and abs(seconds) < _LONGEST_S and abs(settle_s) < _LONGEST_S):
        return [f"{rel}: protocol.seconds {_short(seconds)}, settle_s {_short(settle_s)}: not numbers of seconds "
                f"evaluate takes"]
    problem = seconds_problem(seconds, settle_s, name="protocol.seconds", settle_name="protocol.settle_s")
    if problem:
        return [f"{rel}: {problem}"]
    problems = []
    for key, want, source in (("steps", control_steps(seconds), f"seconds {seconds:g}"),
                              ("settle_steps", settle_steps(settle_s), f"settle_s {settle_s:g}")):
        if key in protocol and not same_value(protocol[key], want):
            problems.append(f"{rel}: protocol.{key} {_short(protocol[key])}, but {source} at control_dt "
                            f"{CONTROL_DT:g} gives {want}")
    return problems


def pipeline_problems(rel: str, protocol: dict) -> list[str]:
    """The flags the evaluate rule does not pass are evaluate's defaults."""
    problems = []
    for key, (default, flag) in _PIPELINE_DEFAULTS.items():
        if key in protocol and not same_value(protocol[key], default):
            problems.append(f"{rel}: protocol.{key} {_short(protocol[key])}, but the pipeline's evaluate rule passes "
                            f"no {flag}, so evaluate's default {default!r}")
    drawn = actions_label(code.NOISE_SCALE)
    if "noise_scale" not in protocol and "actions" in protocol and protocol["actions"] != drawn:  # an older record
        problems.append(f"{rel}: protocol.actions {_short(protocol['actions'])}, but the pipeline's evaluate rule "
                        f"draws them {drawn!r}")
    return problems


def protocol_problems(rel: str, ev: dict, pipeline: bool) -> list[str]:
    """One evaluation's protocol; `pipeline`: the set was made by the pipeline (its plan.json)."""
    protocol = ev.get("protocol")
    if not isinstance(protocol, dict):
        return [f"{rel}: protocol: not the object evaluate records"]
    problems = grid_problems(rel, protocol) + fixed_problems(rel, protocol) + step_problems(rel, protocol)
    return problems + (pipeline_problems(rel, protocol) if pipeline else [])


def shared_problems(evaluations: dict[str, dict]) -> list[str]:
    """{rel: record} of a pipeline set: every evaluation ran with the same seconds and envs
    per command."""
    problems = []
    for key in SHARED:
        by_value: dict[str, list[str]] = {}
        for rel, ev in evaluations.items():
            protocol = ev.get("protocol") if isinstance(ev.get("protocol"), dict) else {}
            if key in protocol:
                by_value.setdefault(_short(protocol[key]), []).append(rel.removeprefix("eval/"))
        if len(by_value) > 1:
            values = "; ".join(f"{value} in {', '.join(rels)}" for value, rels in by_value.items())
            problems.append(f"eval: protocol.{key} {values}: the pipeline evaluates every run of a set with the same "
                            f"--{key.replace('_', '-')} (workflow/rules/common.smk eval_args)")
    return problems


# What workflow/rules/common.smk gave sacscale evaluate before plan.json recorded the
# evaluation's size, by where the runs trained: GPU 8 envs x 20 s, CPU 1 env x 2 s (every
# committed set without the key evaluated with these).
_UNRECORDED_DEFAULTS = {"cuda": {"envs_per_command": 8, "seconds": 20.0},
                        "cpu": {"envs_per_command": 1, "seconds": 2.0}}


def _plan_device(plan: dict) -> str | None:
    """'cuda' where a run configuration of the plan trains on GPUs, 'cpu' where all say CPU,
    None where the run configurations do not say."""
    configs = plan.get("run_configs")
    kinds = [rc.get("device_kind") if isinstance(rc, dict) else None
             for rc in (configs.values() if isinstance(configs, dict) else ())]
    if not kinds or not all(kind in _UNRECORDED_DEFAULTS for kind in kinds):
        return None
    return "cuda" if "cuda" in kinds else "cpu"


def unrecorded_evaluation(plan: dict) -> dict | None:
    """The evaluation size a plan without `evaluation` was evaluated with, where its run
    configurations say the device; None otherwise."""
    device = _plan_device(plan)
    return dict(_UNRECORDED_DEFAULTS[device]) if device else None


def planned_size_problems(evaluations: dict[str, dict], plan: dict) -> tuple[list[str], list[str]]:
    """(problems, notes): every evaluation's seconds and envs per command are plan.json's
    `evaluation` (what the evaluate rule passes), or for a plan that does not record it,
    the default of its time by the plan's device."""
    planned = plan.get("evaluation")
    source = "plan.json evaluation.{key} is {want}"
    if planned is None:
        planned = unrecorded_evaluation(plan)
        if planned is None:
            return [], ["plan.json: no evaluation and no run configuration's device_kind, so the evaluations' "
                        "seconds and envs_per_command are compared only with each other"]
        source = "plan.json records no evaluation, and the evaluate rule then passed {want} for its device"
    if not isinstance(planned, dict) or not all(is_number(planned.get(key)) for key in SHARED):
        return [f"plan.json: evaluation {_short(planned)}: not the envs_per_command and seconds numbers planning "
                "records"], []
    problems = []
    for rel, ev in evaluations.items():
        protocol = ev.get("protocol") if isinstance(ev.get("protocol"), dict) else {}
        for key in SHARED:
            if key in protocol and not same_value(protocol[key], planned[key]):
                problems.append(f"{rel}: protocol.{key} {_short(protocol[key])}, but "
                                + source.format(key=key, want=_short(planned[key])))
    return problems, []
