"""Each run's command and resolved configuration are what the planner's own code makes of
its plan.json entries (sacscale.pipeline.run_commands). A setting moved alike in every record
of a run whose policy the set leaves out by design (its command, command line, resolved
configuration and train_meta.json agree with each other) is named against the plan."""

import json
import shlex

from set_copies import edit_record, remake_manifest

from sacscale.evidence.planned_commands import plan_model, planned_command
from sacscale.evidence.verify import verify
from sacscale.pipeline.runplan import resolved_run

LEFT_OUT = "shared_r2_n1_pool7"  # its policy is left out of the set by design


def _moved(root, option, old, new, resolved, meta):
    """The run's `option old` made `option new` in its command and command line, its
    resolved configuration changed by `resolved` and train_meta.json by `meta` (as the run would
    have written them)."""
    def in_run(run):
        command = run["command"]
        at = command.index(option)
        assert command[at + 1] == old
        command[at + 1] = new
        run["command_line"] = shlex.join(command)
        resolved(run["resolved_config"])
    edit_record(root, f"runs/{LEFT_OUT}/run.json", in_run)
    edit_record(root, f"runs/{LEFT_OUT}/train_meta.json", meta)
    remake_manifest(root)
    return verify(root, report_pending=True).records


def test_a_batch_size_moved_in_every_record_of_a_left_out_run_is_named(work):
    records = _moved(work, "--batch-size", "8192", "4096", lambda r: r.update(batch_size=4096),
                     lambda meta: meta["config"].update(batch_size=4096))
    assert records == [
        f"{LEFT_OUT}: run.json command --batch-size 4096, but plan.json run_configs.n1_pool7 gives 8192",
        f"{LEFT_OUT}: run.json resolved_config.batch_size 4096, but plan.json run_configs.n1_pool7 gives 8192",
    ]


def _learner_on_cpu_8(meta):
    meta["config"]["learner_cpu_ids"] = "8"
    meta["collector_pools"]["learner_affinity"] = [[8]]


def test_an_override_moved_in_every_record_is_named(work):
    records = _moved(work, "--learner-cpu-ids", "0", "8", lambda r: r["overrides"].update({"learner-cpu-ids": "8"}),
                     _learner_on_cpu_8)
    assert records == [
        f"{LEFT_OUT}: run.json command --learner-cpu-ids 8, but plan.json run_configs.n1_pool7 gives 0",
        f"{LEFT_OUT}: run.json resolved_config.overrides.learner-cpu-ids '8', but plan.json run_configs.n1_pool7 "
        "gives '0'",
    ]


def test_an_option_the_plan_does_not_give_is_named(work):
    def in_run(run):
        run["command"].remove("--trace")
        run["command_line"] = shlex.join(run["command"])
        run["resolved_config"]["trace"] = False
    edit_record(work, f"runs/{LEFT_OUT}/run.json", in_run)
    edit_record(work, f"runs/{LEFT_OUT}/train_meta.json", lambda meta: meta["config"].update(trace=False))
    remake_manifest(work)
    records = verify(work, report_pending=True).records
    assert f"{LEFT_OUT}: run.json command has no --trace, but plan.json run_configs.n1_pool7 gives it" in records
    assert f"{LEFT_OUT}: run.json resolved_config.trace False, but plan.json run_configs.n1_pool7 gives True" in records


def test_a_run_index_and_a_configuration_name_the_planner_does_not_write_are_named(work):
    def in_plan(plan):
        plan["runs"][3]["index"] = 5
        plan["run_configs"]["n1_pool7"]["name"] = "n2_shared"
    edit_record(work, "plan.json", in_plan)
    remake_manifest(work)
    records = verify(work, report_pending=True).records
    assert "plan.json run_configs.n1_pool7.name 'n2_shared' is not its key, as the planner writes it" in records
    assert "plan.json: runs[3] index 5, but it is run 4 (index 3)" in records


def test_the_current_format_copy_is_the_planners_word_for_word(current):
    plan = json.loads((current / "plan.json").read_text())
    rebuilt = plan_model(plan)
    for run in rebuilt.runs:
        recorded = json.loads((current / "runs" / run.name / "run.json").read_text())
        assert planned_command(rebuilt, run, recorded["command"]) == recorded["command"]
        assert resolved_run(rebuilt, run) == recorded["resolved_config"]
    assert verify(current, report_pending=True).records == []
