"""The plan fields the run names, seeds and order are derived from are the planner's: a base
seed of another type (1.0, true, [1]) or a prefix of another type or none at all is named,
never a reason to skip the seed or name rule; the prefix is the one each run recorded; and
runs[] is the order they ran, each position with the repeat and configuration the plan's
schedule gives it, so two runs' repeats swapped in all their records do not pass."""

import shlex

import pytest
from set_copies import edit_record, remake_manifest

from sacscale.evidence.verify import verify

LEFT_OUT = "shared_r2_n1_pool7"  # repeat 2; its policy is left out of the set by design
WHY = "as the planner writes it (the runs' names, seeds and order are derived from it)"


def _plan_edited(root, edit):
    """plan.json and environment.json's copy of the plan changed alike by `edit(plan)`."""
    edit_record(root, "plan.json", edit)
    edit_record(root, "environment.json", lambda env: edit(env["plan"]))


def _run_moved(root, name, repeat, seed):
    """The run's repeat and seed set in every JSON record, as a forger would move them."""
    _plan_edited(root, lambda plan: next(r for r in plan["runs"] if r["name"] == name).update(repeat=repeat,
                                                                                              seed=seed))

    def in_run(run):
        command = run["command"]
        command[command.index("--seed") + 1] = str(seed)
        run.update(seed=seed, command_line=shlex.join(command))
        run["resolved_config"].update(seed=seed, repeat=repeat)
    edit_record(root, f"runs/{name}/run.json", in_run)
    edit_record(root, f"runs/{name}/train_meta.json", lambda meta: meta["config"].update(seed=seed))
    edit_record(root, f"metrics/{name}.json", lambda metrics: metrics.update(repeat=repeat))


@pytest.mark.parametrize("seed, shown", [(1.0, "1.0"), (True, "true"), ([1], "[1]")])
def test_a_plan_seed_of_another_type_is_named_not_skipped(work, seed, shown):
    _plan_edited(work, lambda plan: plan.update(seed=seed))
    _run_moved(work, LEFT_OUT, 2, 9)
    remake_manifest(work)
    assert f"plan.json: seed {shown}: not a whole number, {WHY}" in verify(work).records


def test_a_plan_prefix_of_another_type_is_named(work):
    _plan_edited(work, lambda plan: plan.update(prefix=5))
    remake_manifest(work)
    assert f"plan.json: prefix 5: not a string, {WHY}" in verify(work).records


def test_a_plan_without_its_prefix_is_named_and_swapped_repeats_too(work):
    """The plan's prefix removed (the name rule needs it), then two runs of one configuration
    swap repeats and seeds in every record: runs[] no longer follows the plan's schedule."""
    _plan_edited(work, lambda plan: plan.pop("prefix"))
    _run_moved(work, "shared_r1_n2_shared", 2, 2)
    _run_moved(work, "shared_r2_n2_shared", 1, 1)
    remake_manifest(work)
    records = verify(work).records
    assert ("plan.json: prefix: absent, but the planner writes it (the runs' names, seeds and order are derived "
            "from it)") in records
    assert ("plan.json: runs[1] 'shared_r1_n2_shared' is repeat 2 of 'n2_shared', but the plan's counterbalanced "
            "schedule runs repeat 1 of 'n2_shared' there (runs[] is the order they ran)") in records
    assert ("plan.json: runs[2] 'shared_r2_n2_shared' is repeat 1 of 'n2_shared', but the plan's counterbalanced "
            "schedule runs repeat 2 of 'n2_shared' there (runs[] is the order they ran)") in records


def test_a_runs_recorded_prefix_other_than_the_plans_is_named(work):
    edit_record(work, "runs/shared_r1_n1_pool7/run.json", lambda run: run["resolved_config"].update(prefix="other"))
    remake_manifest(work)
    assert ("shared_r1_n1_pool7: run name prefix: plan.json says 'shared', run.json resolved_config says 'other'"
            in verify(work).records)


def test_a_runs_index_other_than_its_position_is_named(work):
    _plan_edited(work, lambda plan: plan["runs"][3].update(index=0))
    remake_manifest(work)
    assert "plan.json: runs[3] index 0, but it is run 4 (index 3)" in verify(work).records


def test_the_committed_sets_plan_is_the_planners(current):
    assert verify(current).records == []


def test_a_runs_recorded_index_other_than_the_plans_is_named(work):
    edit_record(work, f"runs/{LEFT_OUT}/run.json", lambda run: run["resolved_config"].update(index=0))
    remake_manifest(work)
    assert f"{LEFT_OUT}: run index: plan.json says 3, run.json resolved_config says 0" in verify(work).records


@pytest.mark.parametrize("repeats, says", [(10 ** 12, "more than the planner allows (1000)"),
                                           (1001, "more than the planner allows (1000)"),
                                           (0, "fewer than the planner allows (1)")])
def test_a_plan_repeats_past_the_planners_bound_is_named_before_the_order_is_built(work, repeats, says):
    """runs[] is compared with repeats x order positions: a repeats of 10**12 is named, not
    expanded (which took the machine's memory), and no count of runs is made of it."""
    _plan_edited(work, lambda plan: plan.update(repeats=repeats))
    remake_manifest(work)
    records = verify(work).records
    assert f"plan.json: repeats {repeats}: {says}" in records
    assert not [r for r in records if r.startswith("plan.json: runs lists")]


def test_a_plan_order_longer_than_the_planner_allows_is_named(work):
    _plan_edited(work, lambda plan: plan.update(order=[f"c{i}" for i in range(65)]))
    remake_manifest(work)
    assert ("plan.json: order: 65 run configurations, but the planner allows 1 to 64 a repeat"
            in verify(work).records)
