"""Each run's seed is the planner's: both configurations of repeat k run with the plan's seed
+ k - 1 (the page says both configurations of a repeat use the same seed). A run whose policy
the set leaves out by design has no checkpoint to bind its seed: moved in every record, its
manifest made again, it is named against the plan, as is a repeat moved under a run's name."""

import json
import shlex

from set_copies import edit_record, remake_manifest

from sacscale.evidence.verify import verify

LEFT_OUT = "shared_r2_n1_pool7"  # repeat 2; its policy is left out of the set by design
RULE = "(the plan's seed + the run's repeat - 1: both configurations of a repeat run with one seed)"


def _seed_moved(root, name, seed):
    """The run's seed set to `seed` in every JSON record, as a forger would move it."""
    def in_plan(plan):
        next(r for r in plan["runs"] if r["name"] == name)["seed"] = seed
    edit_record(root, "plan.json", in_plan)
    edit_record(root, "environment.json", lambda env: in_plan(env["plan"]))

    def in_run(run):
        command = run["command"]
        command[command.index("--seed") + 1] = str(seed)
        run.update(seed=seed, command_line=shlex.join(command))
        run["resolved_config"]["seed"] = seed
    edit_record(root, f"runs/{name}/run.json", in_run)
    edit_record(root, f"runs/{name}/train_meta.json", lambda meta: meta["config"].update(seed=seed))
    remake_manifest(root)


def test_a_left_out_runs_seed_moved_in_every_record_is_named(work):
    _seed_moved(work, LEFT_OUT, 9)
    records = verify(work).records
    for where in ("plan.json runs[].seed", "run.json seed", "run.json resolved_config.seed",
                  "run.json command --seed", "train_meta.json config.seed"):
        assert f"{LEFT_OUT}: {where} 9, but the plan gives seed 2 {RULE}" in records


def test_a_repeat_moved_under_a_runs_name_is_named(work):
    """The seed and the repeat moved together (repeat 3, seed 3) agree with the rule: the
    run's name, the planner's for repeat 2, says otherwise."""
    def in_plan(plan):
        next(r for r in plan["runs"] if r["name"] == LEFT_OUT).update(repeat=3, seed=3)
    edit_record(work, "plan.json", in_plan)
    remake_manifest(work)
    assert ("plan.json: runs[3] 'shared_r2_n1_pool7' has repeat 3 and configuration 'n1_pool7', which the planner "
            "names 'shared_r3_n1_pool7'") in verify(work).records


def test_the_committed_sets_seeds_are_the_planners(current):
    plan = json.loads((current / "plan.json").read_text())
    assert [r["seed"] for r in plan["runs"]] == [plan["seed"] + r["repeat"] - 1 for r in plan["runs"]]
    assert verify(current).records == []
